;; Non-tail recursion ten million deep: a DepthLimit error, quickly, with no stack overflow.
; error: DepthLimit
; at: *
; time_limit_s: 20
; message: recursion deeper than the limit
(define (f n) (if (= n 0) 0 (+ 1 (f (- n 1)))))
(f 10000000)
