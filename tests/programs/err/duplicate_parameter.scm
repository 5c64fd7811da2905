; error: BadForm
; at: 3:14
(define (f x x) x)
(f 1 2)
