; error: RecurNotInTail
; at: 3:20
(loop ((i 0)) (+ 1 (recur i)))
