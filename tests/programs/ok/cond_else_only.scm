; expect: 5
(cond (else 1 2 (+ 2 3)))
