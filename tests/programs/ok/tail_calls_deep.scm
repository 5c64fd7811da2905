;; A million tail calls run in constant depth (proper tail calls).
; expect: 1000000
(define (count n acc) (if (= n 0) acc (count (- n 1) (+ acc 1))))
(count 1000000 0)
