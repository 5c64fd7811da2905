; error: UnexpectedClose
; at: 4:1
(define a 1)
)
a
