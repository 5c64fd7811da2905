;; x = A^-1 b; d/db c.x = A^-T c; d/dA c.x = -(A^-T c) x^T.
; bind: A=[[2,1],[1,3]] b=[3,5] c=[1,2]
; expect: 3.6
; grad b: [0.2 0.6]
; grad A: [[-0.16 -0.28] [-0.48 -0.84]]
; grad c: [0.8 1.4]
(dot c (solve A b))
