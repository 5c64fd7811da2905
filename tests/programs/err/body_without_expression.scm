; error: BadForm
; at: 3:1
(let ((x 1)) (define y 2))
