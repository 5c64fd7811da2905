;; Non-tail recursion whose depth differs per lane, with per-lane and summed gradients.
; lanes: k=0,1,3
; bind: b=2
; expect: 1, 2, 8
; grad b: 0, 1, 12
; grad_sum b: 13
(define (pw base n) (if (= n 0) 1 (* base (pw base (- n 1)))))
(pw b k)
