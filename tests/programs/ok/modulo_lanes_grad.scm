;; modulo/remainder per lane, and d/dx = 1 away from the jumps.
; lanes: x=7.5,-7.5
; expect: 4, 1
; grad x: 2, 2
(+ (modulo x 3) (remainder x 3) 1)
