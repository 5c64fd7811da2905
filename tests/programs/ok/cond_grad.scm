;; Piecewise function by cond; each lane's gradient is its own piece's.
; lanes: x=-1,0.5,2
; expect: 1, 1, 12
; grad x: -2, 2, 12
(cond ((< x 0) (* x x))
      ((< x 1) 'ignored (* 2 x))
      (else (* 3 x x)))
