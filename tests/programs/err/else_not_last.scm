; error: BadForm
; at: 3:7
(cond (else 1) (#t 2))
