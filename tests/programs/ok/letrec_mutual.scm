; expect: (#t #t #f)
(letrec ((ev? (lambda (n) (if (= n 0) #t (od? (- n 1)))))
         (od? (lambda (n) (if (= n 0) #f (ev? (- n 1))))))
  (list (ev? 10) (od? 7) (ev? 3)))
