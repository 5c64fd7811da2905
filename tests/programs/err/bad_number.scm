; error: UnknownToken
; at: 3:4
(+ 1x 2)
