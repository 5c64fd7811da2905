;; ref: vector element, matrix row, matrix element (indices from 0).
; expect: (20 [3 4] 2 30 [1 2])
(list (ref [10 20 30] 1) (ref (mat [1 2] [3 4]) 1) (ref (mat [1 2] [3 4]) 0 1)
      (ref [10 20 30] 2) (ref [[1 2] [3 4]] 0))
