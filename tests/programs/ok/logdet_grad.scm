;; d log|det A| / dA = A^-T (also for a negative determinant).
; bind: A=[[4,3],[6,3]]
; expect: 1.791759469228055
; grad A: [[-0.5 1] [0.5 -0.6666666666666666]]
(logdet A)
