; bind: x=2
; expect: 16
; grad x: 24
(define f *)
(define (apply2 op a b) (op a b))
(+ (f x x x) (apply2 expt x 3))
