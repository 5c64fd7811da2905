; bind: x=2
; expect: 7
; grad x: 1
(begin 1 'two (+ 3 x 2))
