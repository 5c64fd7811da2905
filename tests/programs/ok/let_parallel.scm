;; let binds in parallel: the inner inits see the outer x and y.
; bind: a=2
; expect: (1 7)
(list (let ((x 1) (y 2)) (let ((x y) (y x)) (- x y)))
      (let ((b (* a a)) (c 3)) (+ b c)))
