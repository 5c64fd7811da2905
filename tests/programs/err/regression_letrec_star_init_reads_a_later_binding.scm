;; An init that uses a binding not yet assigned is still an error.
; error: UsedBeforeDefinition
; at: 4:26
(letrec* ((f (lambda () (g))) (x (f)) (g (lambda () 1))) x)
