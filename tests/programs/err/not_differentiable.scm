; error: NotDifferentiable
; bind: x=2
; wrt: x
; message: a vector of 2
(vec x x)
