; error: BadForm
; at: 3:6
(+ 1 (define x 2))
