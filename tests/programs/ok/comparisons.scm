;; Comparisons chain over two or more arguments.
; expect: (#t #f #t #t #f #t #f #t #t #f)
(list (< 1 2 3) (< 1 3 2) (<= 1 1 2) (> 3 2 1) (>= 3 3 4) (= 2 2 2) (= 2 2 3) (< 1 2)
      (>= 5 5) (> 1 1))
