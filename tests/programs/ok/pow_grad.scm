;; d/dx x^y = y x^(y-1), d/dy x^y = x^y ln x.
; bind: x=2 y=3
; expect: 8
; grad x: 12
; grad y: 5.545177444479562
(pow x y)
