; error: StepBudget
; at: *
; limits: max_steps=100000
; time_limit_s: 10
(define (f x) (f x))
(f 1)
