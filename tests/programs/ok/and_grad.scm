; lanes: x=-1,3,11
; expect: 0, 9, 0
; grad x: 0, 6, 0
(if (and (> x 0) (< x 10)) (* x x) 0)
