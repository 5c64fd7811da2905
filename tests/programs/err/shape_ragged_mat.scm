; error: Shape
; at: 3:1
(mat [1 2] [1 2 3])
