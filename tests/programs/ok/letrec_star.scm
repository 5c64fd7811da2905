;; letrec*: inits run in order and may use earlier bindings' values.
; bind: x=3
; expect: 11
; grad x: 2
(letrec* ((a 2) (b (* a x)) (f (lambda (y) (+ y b))))
  (f (+ a 3)))
