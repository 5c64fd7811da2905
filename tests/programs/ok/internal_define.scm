;; Internal defines of values and functions in a function body.
; bind: a=2
; expect: 6
; grad a: 3
(define (f x)
  (define y (* x 2))
  (define (g z) (+ z y))
  (g x))
(f a)
