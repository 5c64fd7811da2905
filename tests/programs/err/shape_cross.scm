; error: Shape
; at: 3:1
(cross [1 2] [3 4])
