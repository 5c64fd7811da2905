; bind: s=2 v=[1,2,3]
; expect: 12
; grad s: 6
; grad v: [2 2 2]
(vsum (scale s v))
