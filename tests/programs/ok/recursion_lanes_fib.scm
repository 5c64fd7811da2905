; lanes: n=0,1,10,15
; expect: 0, 1, 55, 610
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(fib n)
