; expect: ([2 4] [[3 0] [0 3]] [-1 -2])
(list (scale 2 [1 2]) (scale 3 (eye 2)) (scale -1 [1 2]))
