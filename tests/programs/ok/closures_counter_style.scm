;; Each closure keeps its own captured value.
; expect: (10 20 30)
(define (make k) (lambda () k))
(define cs (list (make 10) (make 20) (make 30)))
(list ((car cs)) ((car (cdr cs))) ((car (cdr (cdr cs)))))
