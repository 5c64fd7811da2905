;; Local names shadow primitives; a top-level function may be named like one.
; expect: (7 1 9 mine)
(define (square x) (* x x))
(define (car p) 'mine)
(let ((+ -) (max min))
  (list (+ 10 3) (max 1 2) (square 3) (car '(1 2))))
