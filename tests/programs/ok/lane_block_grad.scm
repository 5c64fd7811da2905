;; Gradients, per lane and summed, are the same when the lanes are cut into blocks.
; lanes: x=-2,-1,0,1,2
; bind: a=2
; lane_block: 2
; expect: 8, 2, 2, 2, 4
; grad a: 4, 1, 1, 1, 2
; grad_sum a: 9
; grad x: -8, -4, 0, 2, 2
(cond ((< x 0) (* a x x)) ((> x 0) (* a x)) (else a))
