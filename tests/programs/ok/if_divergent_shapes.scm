;; Branches return numbers of different shapes (a scalar, a 2-vector, a 3-vector).
; lanes: x=1,-1,0
; expect: [1 2], [-1 -1 -1], 0
(cond ((> x 0) (vec x (* 2 x)))
      ((< x 0) (vec x x x))
      (else x))
