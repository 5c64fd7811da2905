;; recur from divergent branches through when and or.
; lanes: x=0,1
; expect: 4, 2
; grad x: 0, 2
(loop ((i 0) (acc 0))
  (cond ((> i 3) acc)
        ((= x 0) (when #t (recur (+ i 1) (+ acc 1))))
        (else (or #f (recur (+ i 2) (+ acc x))))))
