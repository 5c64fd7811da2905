;; d det A / dA = det(A) A^-T.
; bind: A=[[4,3],[6,3]]
; expect: -6
; grad A: [[3 -6] [-3 4]]
(det A)
