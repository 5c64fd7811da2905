;; trace(A^T A) is the squared Frobenius norm: gradient 2A.
; bind: A=[[1,2],[3,4]]
; expect: 30
; grad A: [[2 4] [6 8]]
(trace (matmul (transpose A) A))
