;; A runtime error on some lanes only: those lanes fail, the others succeed.
; lanes: x=1,-1,2
; expect: !Type@5:13, 1, !Type@5:13
; grad x: *, 0, *
(if (> x 0) (car x) 1)
