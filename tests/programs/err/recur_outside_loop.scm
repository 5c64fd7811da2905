; error: RecurOutsideLoop
; at: 4:15
(define (f n)
  (if (= n 0) (recur (- n 1)) n))
(f 1)
