; expect: nonfinite
(solve (mat [1 2] [2 4]) [1 1])
