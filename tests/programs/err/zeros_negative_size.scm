; error: Domain
; at: 3:1
(zeros -1)
