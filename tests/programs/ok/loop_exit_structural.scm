;; Lanes leave a loop at different iterations with structurally different values.
; lanes: x=0,1,3
; expect: 0, 1, big
(loop ((i 0))
  (cond ((= i x) (if (> x 1) 'big i))
        (else (recur (+ i 1)))))
