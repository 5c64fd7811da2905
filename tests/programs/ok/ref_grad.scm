; bind: v=[1,2,3] M=[[1,2],[3,4]]
; expect: 14
; grad v: [1 0 2]
; grad M: [[0 0] [1 1]]
(+ (ref v 0) (* 2 (ref v 2)) (vsum (ref M 1)) (* (ref M 0 1) 1) (- (ref M 0 1)))
