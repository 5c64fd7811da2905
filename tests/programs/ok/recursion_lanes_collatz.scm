;; Collatz step counts: depth and branch pattern differ wildly per lane.
; lanes: n=1,6,7,27
; expect: 0, 8, 16, 111
(define (steps n)
  (cond ((= n 1) 0)
        ((= (modulo n 2) 0) (+ 1 (steps (/ n 2))))
        (else (+ 1 (steps (+ (* 3 n) 1))))))
(steps n)
