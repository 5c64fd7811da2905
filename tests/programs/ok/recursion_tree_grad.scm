; lanes: n=1,5,0
; bind: x=1.5
; expect: 1.5, 12, 1.5
; grad x: 1, 8, 1
(define (f n) (if (< n 2) x (+ (f (- n 1)) (f (- n 2)))))
(f n)
