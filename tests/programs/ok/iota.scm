;; iota counts from 0; with outer and cos it builds the ceiling model's transition matrix.
; bind: n=4
; lanes: s=1,2
; expect: 6, 12
; grad s: 6, 6
(vsum (* s (iota n)))
