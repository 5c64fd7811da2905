;; A matrix right-hand side is solved column by column.
; expect: ([0.8 1.4] [[0.8 0.2] [1.4 0.6]])
(list (solve (mat [2 1] [1 3]) [3 5]) (solve (mat [2 1] [1 3]) (mat [3 1] [5 2])))
