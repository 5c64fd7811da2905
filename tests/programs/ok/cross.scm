;; d/da (a x b) . c = b x c, d/db = c x a, d/dc = a x b.
; bind: a=[1,2,3] b=[4,5,6] c=[7,8,10]
; expect: -3
; grad a: [2 2 -3]
; grad b: [4 -11 6]
; grad c: [-3 6 -3]
(dot (cross a b) c)
