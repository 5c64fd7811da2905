; error: Shape
; at: 3:1
(det (mat [1 2 3] [4 5 6]))
