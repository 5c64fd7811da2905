; error: BadForm
; at: 3:6
(+ 1 ')
