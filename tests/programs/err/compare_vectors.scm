; error: Type
; at: 3:1
(< [1 2] 3)
