; expect: (1024 1.4142135623730951 3 0.5 1)
(list (pow 2 10) (expt 2 0.5) (pow 9 0.5) (expt 2 -1) (expt 7 0))
