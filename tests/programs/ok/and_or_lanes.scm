;; Per-lane and/or: `or` gives #t on some lanes and a number on others.
; lanes: x=-1,3,11
; expect: (0 #t), (9 6), (0 #t)
(list (if (and (> x 0) (< x 10)) (* x x) 0)
      (or (not (< 0 x 10)) (* 2 x)))
