; expect: ((1 . 2) a (b) () (1) 2 (1 2 . 3) ((1 2) 3))
(list (cons 1 2) (car '(a b)) (cdr '(a b)) (list) (cons 1 '()) (car (cdr (list 1 2 3)))
      (cons 1 (cons 2 3)) (cons (list 1 2) (list 3)))
