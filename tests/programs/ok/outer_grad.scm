; bind: u=[1,2] v=[3,4,5]
; expect: 36
; grad u: [12 12]
; grad v: [3 3 3]
(vsum (outer u v))
