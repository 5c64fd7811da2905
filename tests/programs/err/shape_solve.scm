; error: Shape
; at: 3:1
(solve (eye 2) [1 2 3])
