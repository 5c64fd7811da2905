; error: RecurNotInTail
; at: 4:12
(loop ((i 0))
  (let ((j (recur 1))) j))
