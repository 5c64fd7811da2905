;; R7RS and the decoder's own message ("only allowed at the top level or at the start of a
;; body") put internal defines before the body's expressions.
; error: BadForm
; at: 7:3
(define (f x)
  (+ x 1)
  (define y 2)
  y)
(f 1)
