;; One lane fails inside a loop; the others finish with exact gradients.
; lanes: x=2,10,-1
; bind: a=3
; expect: !Type@8:18, 18, 18
; grad a: *, 6, 6
(loop ((i 0) (acc 0))
  (cond ((= i 4) acc)
        ((= i x) (car acc))
        (else (recur (+ i 1) (+ acc (* a i))))))
