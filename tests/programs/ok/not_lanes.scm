; lanes: x=1,-1
; expect: (#f #f), (#t #t)
(list (not (> x 0)) (not (not (< x 0))))
