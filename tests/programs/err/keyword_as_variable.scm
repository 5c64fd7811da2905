; error: BadForm
; at: 4:4
; message: `if` is a keyword
(+ if 1)
