; error: BadForm
; at: 3:1
#| this comment never ends
(+ 1 2)
