; expect: (#t #f #f #f #f #f)
(list (not #f) (not #t) (not 0) (not '()) (not 'a) (not (lambda () 1)))
