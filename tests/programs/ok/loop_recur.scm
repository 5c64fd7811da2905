;; loop/recur with three variables.
; expect: (10 32 5)
(loop ((i 0) (s 0) (p 1))
  (if (= i 5) (list s p i) (recur (+ i 1) (+ s i) (* p 2))))
