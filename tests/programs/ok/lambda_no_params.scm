; expect: (42 #<procedure> 1)
(list ((lambda () 42)) (lambda (x) x) ((lambda (f) (f)) (lambda () 1)))
