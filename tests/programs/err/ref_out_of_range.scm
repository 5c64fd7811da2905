; error: Domain
; at: 4:1
; message: out of range
(ref [1 2 3] 3)
