; expect: (#t #f #t #t #f #t #t #f #t)
(list (eq? 'a 'a) (eq? 'a 'b) (eq? '() '()) (eq? 2 2) (eq? 2 3) (eq? #t #t)
      (let ((p (cons 1 2))) (eq? p p)) (eq? (cons 1 2) (cons 1 2)) (eq? car car))
