;; A divergent `if`: the test differs per lane, each lane takes its own branch and gets the
;; gradient of that branch only.
; lanes: x=1,3,-2,0.5
; bind: a=2
; expect: 10, -3, 20, 5
; grad x: 10, -1, 0, 10
; grad a: 0, 0, 10, 0
(if (< x 2)
    (if (> x 0) (* x 10) (* a 10))
    (- x))
