; bind: v=[0,1]
; expect: 3.718281828459045
; grad v: [1 2.718281828459045]
(+ (vsum (exp v)) (* 0 (vsum (abs v))))
