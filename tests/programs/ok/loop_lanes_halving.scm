;; Trip count differs per lane: halve x until it is below 1, counting the steps. A finished
;; lane's values stay frozen while the others go on.
; lanes: x=0.5,1,3,100
; expect: (0 0.5), (1 0.5), (2 0.75), (7 0.78125)
(loop ((y x) (n 0))
  (if (< y 1) (list n y) (recur (/ y 2) (+ n 1))))
