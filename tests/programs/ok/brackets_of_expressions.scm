;; Brackets evaluate their elements; gradients reach each element.
; bind: x=1.5
; expect: [[1.5 3] [3 2.25]]
(mat [x (* 2 x)] (vec 3 (* x x)))
