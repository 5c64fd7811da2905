; error: Shape
; at: 3:1
(matmul (mat [1 2] [3 4]) (mat [1 2 3]))
