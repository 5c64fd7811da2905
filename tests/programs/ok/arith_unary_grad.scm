;; Unary - and / (negation and reciprocal) and their gradients.
; bind: x=4
; expect: -3.75
; grad x: -1.0625
(+ (- x) (/ x))
