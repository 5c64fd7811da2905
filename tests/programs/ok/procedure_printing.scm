; expect: (#<procedure sq> #<procedure> #<procedure +> #<procedure walk>)
(define (sq x) (* x x))
(list sq (lambda (y) y) + (letrec ((walk (lambda (n) n))) walk))
