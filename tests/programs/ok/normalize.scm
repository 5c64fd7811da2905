; bind: v=[3,4]
; expect: 0.6
; grad v: [0.128 -0.096]
(ref (normalize v) 0)
