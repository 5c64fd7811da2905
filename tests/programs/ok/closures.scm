;; Closures capture variables (inputs included) by value at creation.
; bind: x=5
; expect: 11
; grad x: 1
(define (make-adder k) (lambda (y) (+ y k)))
(define add3 (make-adder 3))
(define addx (make-adder x))
(+ (add3 1) (addx 2))
