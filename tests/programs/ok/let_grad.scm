; bind: a=2
; expect: 7
; grad a: 4
(let ((b (* a a)) (c 3)) (+ b c))
