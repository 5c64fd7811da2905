;; One lane never leaves its loop: the step budget is a resource limit, so every lane fails.
; error: StepBudget
; at: *
; lanes: x=1,-1
; limits: max_steps=100000
; time_limit_s: 10
(loop ((i 0)) (if (< x 0) (recur i) i))
