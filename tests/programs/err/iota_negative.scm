; error: Domain
; at: 3:1
(iota -1)
