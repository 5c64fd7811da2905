;; The same divergent program cut into blocks of two lanes.
; lanes: x=-2,-1,0,1,2
; lane_block: 2
; expect: 4, 1, zero, 2, 4
(cond ((< x 0) (* x x)) ((> x 0) (* 2 x)) (else 'zero))
