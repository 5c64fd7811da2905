;; A later top-level define of the same name replaces the value from then on.
; expect: (1 2)
(define a 1)
(define first a)
(define a 2)
(list first a)
