; bind: a=3
; expect: 10
; grad a: 6
((lambda (x y) (+ (* x x) y)) a 1)
