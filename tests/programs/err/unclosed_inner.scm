; error: Unclosed
;; The innermost unclosed opener is reported: the binding list of the let.
; at: 5:8
(define (f x)
  (let ((y 1)
