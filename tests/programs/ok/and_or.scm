;; and/or return the deciding value, not just #t/#f.
; expect: (#t #f 3 #f 2 #f 1 #f)
(list (and) (or) (and 1 2 3) (and 1 #f 3) (or #f 2) (or #f #f) (or 1 (car 5)) (and #f (car 5)))
