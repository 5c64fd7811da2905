;; Gradients of the finite lanes are unaffected by a NaN lane even when all lanes share the
;; differentiated input.
; lanes: x=1,-1,4
; bind: w=3
; expect: 3, nan, 6
; grad w: 1, nan, 2
(* w (sqrt x))
