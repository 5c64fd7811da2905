; error: BadForm
; at: 3:8
(let ((lambda 1)) lambda)
