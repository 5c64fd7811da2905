; expect: ([0.6 0.8] [[0.6 0] [0 0.8]])
(list (normalize [3 4]) (normalize (mat [3 0] [0 4])))
