; error: ArityMismatch
; at: 3:1
((lambda (x) x) 1 2)
