;; Newton's iteration for sqrt(a) until converged: a different number of iterations per lane;
;; the gradient of the converged value is (nearly exactly) 1 / (2 sqrt a).
; lanes: a=1,4,100,0.25
; tol: 1e-6
; expect: 1, 2, 10, 0.5
; grad a: 0.5, 0.25, 0.05, 1
(loop ((y (+ a 1)) (k 0))
  (if (< (abs (- (* y y) a)) 1e-13) y (recur (* 0.5 (+ y (/ a y))) (+ k 1))))
