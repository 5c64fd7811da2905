; expect: ([[1 4] [2 5] [3 6]] 5 [[3 4 5] [6 8 10]] 5)
(list (transpose (mat [1 2 3] [4 5 6])) (trace (mat [1 2] [3 4])) (outer [1 2] [3 4 5])
      (trace (matmul (mat [1 2]) (transpose (mat [1 2])))))
