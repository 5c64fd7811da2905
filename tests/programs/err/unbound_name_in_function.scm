; error: UnboundName
; at: 4:25
; stage: run
(define (f a) (+ a (* 2 y)))
(f 1)
