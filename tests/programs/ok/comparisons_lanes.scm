;; A chained comparison on per-lane data.
; lanes: x=-1,5,10
; expect: out, in, out
(if (< 0 x 10) 'in 'out)
