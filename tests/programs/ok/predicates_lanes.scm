;; A per-lane boolean is still a boolean; per-lane numbers are numbers.
; lanes: x=1,-1
; expect: (#t #t #f)
(list (boolean? (> x 0)) (number? x) (null? x))
