;; The branch not taken on a lane would give NaN there (log or sqrt of a negative number);
;; neither the value nor any gradient of that lane may see it.
; lanes: x=2.718281828459045,-1,16
; bind: a=3
; expect: 3, 3, 6
; grad a: 1, 1, 2
; grad x: 1.103638323514327, 3, 0.1875
(* a (if (> x 0) (if (> x 3) (sqrt (/ x 4)) (log x)) (+ x 2)))
