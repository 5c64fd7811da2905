; error: BadForm
; at: 4:13
; message: bound twice
(let ((x 1) (x 2)) x)
