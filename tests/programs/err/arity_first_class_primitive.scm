; error: ArityMismatch
; at: 4:1
(define g car)
(g '(1) '(2))
