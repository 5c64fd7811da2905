;; A scalar broadcast against a vector gets the summed gradient.
; bind: s=2 v=[1,2,3]
; expect: -3
; grad s: 4.5
; grad v: [0.5 0.5 0.5]
(vsum (- (* s v) (/ v s) (- s) (+ v s s)))
