;; cond with an else clause, per lane.
; lanes: x=-2,0,5
; expect: neg, zero, pos
(cond ((< x 0) 'neg)
      ((= x 0) 'zero)
      (else 'pos))
