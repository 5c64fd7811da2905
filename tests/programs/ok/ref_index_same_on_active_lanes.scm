;; A per-lane index is fine where it is the same on every lane that runs the ref.
; lanes: i=0,1,1
; expect: 10, 40, 40
(if (= i 0) (ref [10 20] i) (ref [30 40 50] i))
