; expect: (0 1 1 0 3 2.5 1)
(list (sin 0) (cos 0) (exp 0) (log 1) (sqrt 9) (abs -2.5) (abs 1))
