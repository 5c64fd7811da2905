; error: Shape
; at: 3:1
(dot [1 2] [1 2 3])
