;; letrec*/internal define: a closure made inside an init expression (not a bare lambda)
;; refers to a later binding; it is only called after that binding is initialised, so this is a
;; valid program (R7RS letrec* semantics) with value 6.
; expect: 6
(define (outer)
  (define f (let ((k 1)) (lambda () (+ k (g)))))
  (define (g) 5)
  (f))
(outer)
