; error: Type
; at: 3:1
(+ 'a 1)
