;; Top-level defines of values; later definitions use earlier ones.
; bind: x=2
; expect: 9
; grad x: 3
(define a 3)
(define b (* a x))
(+ a b)
