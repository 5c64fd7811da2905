;; Where the budget runs out is not specified: any span.
; error: StepBudget
; at: *
; limits: max_steps=100000
; time_limit_s: 10
; message: step budget of 100000 steps exhausted
(loop ((i 0)) (recur (+ i 1)))
