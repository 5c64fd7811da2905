;; A different closure per lane.
; lanes: x=2,-3
; expect: 4, 3
; grad x: 4, -1
((if (> x 0) (lambda (y) (* y y)) (lambda (y) (- y))) x)
