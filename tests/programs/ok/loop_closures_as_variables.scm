;; Loop variables may hold closures: each round wraps the previous function.
; bind: x=1.5
; expect: 12
; grad x: 8
(loop ((i 0) (f (lambda (z) z)))
  (if (= i 3)
      (f x)
      (recur (+ i 1) (let ((g f)) (lambda (z) (* 2 (g z)))))))
