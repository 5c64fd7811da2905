; error: Binding
; stage: run
; bind: x=1
; wrt: y
(+ x 1)
