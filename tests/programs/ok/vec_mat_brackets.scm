;; vec, mat, [a b c] and [[a b] [c d]] build vectors and matrices.
; expect: ([1 2 3] [4 5] [[1 2] [3 4]] [[1 2] [3 4]] [[5 6 7]] [[1] [2]])
(list (vec 1 2 3) [4 5] (mat [1 2] [3 4]) [[1 2] [3 4]] (mat (vec 5 6 7)) [[1] [2]])
