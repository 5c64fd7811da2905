; bind: x=2
; expect: 6
; grad x: 3
(loop ((i 0) (acc 0))
  (if (= i 3) acc (recur (+ i 1) (+ acc (* x i)))))
