;; Regression: the printed forms of non-finite numbers read back as numbers, not as names.
; expect: (+inf.0 -inf.0 +nan.0)
(list +inf.0 -inf.0 +nan.0)
