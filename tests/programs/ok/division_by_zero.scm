;; Division by zero follows IEEE: infinities and NaN, not errors.
; expect: (+inf.0 -inf.0 +nan.0)
(list (/ 1 0) (/ -1 0) (/ 0 0))
