; error: MismatchedClose
; at: 3:13
(vsum [1 2 3))
