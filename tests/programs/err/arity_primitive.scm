; error: ArityMismatch
; at: 4:6
; message: `car` expects 1 argument(s), got 2
(+ 1 (car '(1) '(2)))
