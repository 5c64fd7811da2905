;; Nested loops whose trip counts both depend on the lane.
; lanes: x=1,3,0
; bind: a=2
; expect: 2, 18, 0
; grad a: 1, 9, 0
(loop ((i 0) (total 0))
  (if (>= i x)
      total
      (recur (+ i 1)
             (+ total (loop ((j 0) (s 0)) (if (>= j x) s (recur (+ j 1) (+ s a))))))))
