; lanes: x=-2,3
; expect: 2, 3
; grad x: -1, 1
(abs x)
