; bind: x=1.5
; expect: 18.75
; grad x: 18
(+ (vsum (* [x (* 2 x) 3] [x x 1])) (vsum (* [[x 1] [2 x]] [[x x] [x x]])))
