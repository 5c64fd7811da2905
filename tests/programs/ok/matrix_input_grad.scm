;; Matrix inputs: d/dA and d/dB of the sum of all entries of A B.
; bind: A=[[1,2],[3,4]] B=[[5,6],[7,8]]
; expect: 134
; grad A: [[11 15] [11 15]]
; grad B: [[4 4] [6 6]]
(vsum (matmul A B))
