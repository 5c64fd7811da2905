;; eq? on booleans computed per lane compares them lane by lane.
; lanes: x=1,-1
; expect: (#t #t #f), (#f #t #t)
(list (eq? (> x 0) #t) (eq? (> x 0) (> x 0)) (eq? #f (> x 0)))
