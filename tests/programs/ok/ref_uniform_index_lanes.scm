;; An index computed per lane is fine when it is the same on every lane.
; lanes: x=1,2
; expect: 20, 40
; grad x: 20, 20
(* x (ref [10 20 30] (- (* 2 (/ x x)) 1)))
