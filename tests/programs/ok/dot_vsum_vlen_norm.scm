; expect: (32 6 10 3 2 5 5 0)
(list (dot [1 2 3] [4 5 6]) (vsum [1 2 3]) (vsum (mat [1 2] [3 4])) (vlen [1 2 3])
      (vlen (mat [1 2 3] [4 5 6])) (norm [3 4]) (norm (mat [1 2] [2 4])) (norm (zeros 2)))
