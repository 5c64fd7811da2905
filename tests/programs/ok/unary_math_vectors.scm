;; Unary math, pow, min, max and modulo apply elementwise to vectors and matrices.
; expect: ([2 3] [1 2] [1 1] [0 0] [0] [1] [4 9] [1 3] [3 5] [1 2] [[1 4] [9 16]])
(list (sqrt [4 9]) (abs [-1 2]) (exp [0 0]) (log (vec 1 1)) (sin [0]) (cos [0])
      (pow [2 3] 2) (min [1 5] 3) (max [1 5] 3) (modulo [7 -7] 3) (expt [[1 2] [3 4]] 2))
