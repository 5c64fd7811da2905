;; Nested loops: recur belongs to the innermost loop.
; bind: x=2
; expect: 12
; grad x: 6
(loop ((i 0) (total 0))
  (if (= i 3)
      total
      (recur (+ i 1)
             (+ total (loop ((j 0) (s 0)) (if (> j i) s (recur (+ j 1) (+ s x))))))))
