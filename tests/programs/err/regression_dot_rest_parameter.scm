;; Regression: `.` used to read as a name, so a rest parameter silently became a parameter.
; error: UnknownToken
; at: 4:14
(define (f a . rest) a)
(f 1 2 3)
