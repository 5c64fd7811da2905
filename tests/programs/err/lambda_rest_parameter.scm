; error: BadForm
; at: 3:9
(lambda x x)
