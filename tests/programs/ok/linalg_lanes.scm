;; Per-lane matrices: solve and det run lane by lane with per-lane gradients.
; lanes: A=[[2,0],[0,2]],[[4,1],[1,3]]
; expect: 5, 11.454545454545455
; grad A: [[1.75 -0.25] [-0.25 1.75]], [[2.9669421487603307 -1.0495867768595042] [-1.0495867768595042 3.925619834710744]]
(+ (vsum (solve A [1 1])) (det A))
