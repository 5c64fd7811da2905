; error: Shape
; at: 4:1
; message: cannot combine a vector of 2 with a vector of 3
(+ [1 2] [1 2 3])
