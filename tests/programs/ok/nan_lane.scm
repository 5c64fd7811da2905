;; One lane's sqrt of a negative number is NaN; the other lanes' values and gradients stay
;; finite and exact, and the NaN lane's finite partials are still reported.
; lanes: x=4,-1,9
; bind: a=2
; expect: 10, nan, 21
; grad x: 2.25, nan, 2.1666666666666665
; grad a: 4, -1, 9
; grad_sum a: 12
(+ (sqrt x) (* a x))
