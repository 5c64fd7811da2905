; error: MismatchedClose
; at: 3:7
(+ 1 2]
