;; With protected ops, sqrt and log clamp their argument to at least 1e-8 (gradient 0 below).
; options: protected
; lanes: x=-1,4
; expect: -18.420580743952367, 3.386294361119891
; grad x: 0, 0.5
(+ (sqrt x) (log x))
