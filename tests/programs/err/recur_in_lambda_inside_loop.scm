; error: RecurOutsideLoop
; at: 3:27
(loop ((i 0)) ((lambda () (recur 1))))
