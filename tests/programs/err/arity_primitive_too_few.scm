; error: ArityMismatch
; at: 3:1
(dot [1 2])
