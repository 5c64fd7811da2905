; expect: (3 3 2 8 -5 1.5 -0.5)
(list (min 3) (max 3) (min 4 2 8) (max 4 2 8) (min -1 -5) (max 1.5 1.25) (min 1 -0.5 7))
