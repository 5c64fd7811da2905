;; Per-lane trip counts with gradients: d/dx of x / 2^n(x) + 10 n(x) is 2^-n.
; lanes: x=0.5,1,3,100
; expect: 0.5, 10.5, 20.75, 70.78125
; grad x: 1, 0.5, 0.25, 0.0078125
(loop ((y x) (n 0))
  (if (< y 1) (+ y (* 10 n)) (recur (/ y 2) (+ n 1))))
