; error: ArityMismatch
; at: 5:1
; message: `f` expects 2
(define (f x y) x)
(f 1)
