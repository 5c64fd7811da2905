;; A tail call in a branch of a loop body after some lanes have already left the loop.
; lanes: x=1,3,6
; expect: 80, 60, 60
; grad x: 80, 20, 10
(define (finish v) (* v 10))
(loop ((i 0) (s x))
  (if (> s 5) (finish s) (recur (+ i 1) (* s 2))))
