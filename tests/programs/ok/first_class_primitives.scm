;; Primitives are values: bound by define, passed, chosen by if, printed.
; expect: (6 9 #t #f 12 -1 #<procedure car> (1 2))
(define f +)
(define g max)
(define (apply2 op a b) (op a b))
(list (f 1 2 3) (g 4 9 2) (procedure? f) (procedure? 1)
      ((if #t * -) 3 4) (apply2 - 2 3) car (apply2 list 1 2))
