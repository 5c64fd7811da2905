;; Lanes leave a loop with vectors of different lengths; gradients stay per lane.
; lanes: x=1,2
; bind: a=2
; expect: 4, 16
; grad a: 4, 24
(vsum (loop ((i 0) (s a))
        (if (= i x) (if (= x 1) (vec s) (vec s s)) (recur (+ i 1) (* s a)))))
