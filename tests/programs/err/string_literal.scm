; error: UnknownToken
; at: 4:6
; message: no strings
(+ 1 "two")
