; error: RecurNotInTail
; at: 3:19
(loop ((i 0)) (if (recur 1) 1 2))
