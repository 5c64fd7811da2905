;; The gradient of min/max flows to the chosen argument.
; lanes: x=1,6
; bind: y=2
; expect: 5, 14
; grad x: 1, 2
; grad y: 2, 1
(+ (min x y 5) (* 2 (max x y)))
