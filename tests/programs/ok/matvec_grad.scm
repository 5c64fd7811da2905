;; d/dA w.(A v) = w v^T, d/dv = A^T w.
; bind: A=[[1,2],[3,4]] v=[1,-1] w=[2,1]
; expect: -3
; grad A: [[2 -2] [1 -1]]
; grad v: [5 8]
; grad w: [-1 -1]
(dot w (matvec A v))
