;; recur from both branches of a divergent if, and exits from two different places.
; lanes: x=1,2,3,4
; expect: 8, 9, 11, 12
; grad x: 1, 1, 1, 1
(loop ((i 0) (y x))
  (cond ((> y 10) y)
        ((= i 4) (+ y 3))
        ((> x 2) (recur (+ i 1) (+ y 2)))
        (else (recur (+ i 1) (+ y 1)))))
