; error: BadForm
; at: 3:1
(if 1)
