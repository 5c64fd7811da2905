; error: Domain
; at: 3:1
(ref (mat [1 2] [3 4]) 0 2)
