; bind: A=[[4,7],[2,6]]
; expect: 0.1
; grad A: [[0.04 -0.08] [-0.03 0.06]]
(vsum (inv A))
