;; Lists built in different branches, then taken apart.
; lanes: x=1,-1
; expect: 1, 2
(car (if (> x 0) (list 1) (list 2 3)))
