; error: ArityMismatch
; at: 4:15
(loop ((i 0) (j 0))
  (if (< i 3) (recur (+ i 1)) i))
