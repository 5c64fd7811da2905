;; Non-tail recursion 5000 deep with a gradient through every level.
; bind: x=1.5
; expect: 7500
; grad x: 5000
(define (sum n) (if (= n 0) 0 (+ x (sum (- n 1)))))
(sum 5000)
