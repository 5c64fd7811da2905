;; A NaN lane inside a loop with per-lane trip counts; NaN < 1.5 is false, so the NaN lane
;; runs until its counter stops it.
; lanes: x=16,-4,2
; expect: (2 1.4142135623730951), (5 +nan.0), (0 1.4142135623730951)
(loop ((y (sqrt x)) (n 0))
  (if (or (< y 1.5) (= n 5)) (list n y) (recur (sqrt y) (+ n 1))))
