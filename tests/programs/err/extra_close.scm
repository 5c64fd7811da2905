; error: UnexpectedClose
; at: 4:8
; message: unbalanced parentheses
(+ 1 2))
