;; + - * / with zero, one and many arguments (left folds).
; expect: (0 1 5 5 -5 0.25 4 5 10 24 -1.5)
(list (+) (*) (+ 5) (* 5) (- 5) (/ 4) (- 10 1 2 3) (/ 120 2 3 4) (+ 1 2 3 4) (* 1 2 3 4)
      (- 1.5 3))
