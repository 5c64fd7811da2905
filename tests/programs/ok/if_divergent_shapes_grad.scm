;; Shape-divergent branches reduced to a number afterwards: the lane groups run apart and each
;; keeps its exact gradient.
; lanes: x=1,-1,2
; expect: 3, -3, 6
; grad x: 3, 3, 3
(let ((v (if (> x 0) (vec x (* 2 x)) (vec x x x))))
  (vsum v))
