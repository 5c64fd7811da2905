;; A lane whose value is #f cannot be differentiated: that lane alone reports NotDifferentiable.
; lanes: x=2,-2
; expect: 4, !NotDifferentiable
; grad x: 4, *
(when (> x 0) (* x x))
