; bind: v=[3,4] w=[1,2]
; expect: 16
; grad v: [1.6 2.8]
; grad w: [3 4]
(+ (dot v w) (norm v) (* 0 (vlen v)))
