;; let*: each init sees the previous bindings; shadowing within one let*.
; bind: a=1.5
; expect: 13.5
; grad a: 18
(let* ((x a) (y (* x 2)) (z (+ x y)) (x z)) (* x y))
