;; eye n, zeros n, zeros r c, ones n, ones r c.
; expect: ([[1 0] [0 1]] [0 0 0] [[0 0 0] [0 0 0]] [1 1] [[1 1]] [[1 0 0] [0 1 0] [0 0 1]])
(list (eye 2) (zeros 3) (zeros 2 3) (ones 2) (ones 1 2) (eye 3))
