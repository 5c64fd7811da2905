;; Regression: an init of `letrec*` may call a procedure that uses a binding defined after it,
;; once that binding has been assigned (closures made during the inits read it late).
; expect: 1
(letrec* ((f (lambda () (g))) (g (lambda () 1)) (x (f))) x)
