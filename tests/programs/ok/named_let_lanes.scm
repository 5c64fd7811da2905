;; Named let whose trip count differs per lane.
; lanes: n=0,1,5
; bind: x=2
; expect: 1, 2, 32
; grad x: 0, 1, 80
(let pow ((k n) (acc 1))
  (if (= k 0) acc (pow (- k 1) (* acc x))))
