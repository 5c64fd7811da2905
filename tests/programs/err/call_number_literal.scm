; error: NotCallable
; at: 3:1
(5 1)
