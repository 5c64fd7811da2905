;; letrec: a lambda init sees bindings whose inits run after it.
; expect: (5 7 3)
(define (h) (define (a) b) (define b 3) (a))
(list (letrec ((f (lambda () g)) (g 5)) (f))
      (letrec ((f (lambda () (g))) (g (lambda () 7))) (f))
      (h))
