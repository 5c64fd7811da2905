; error: NotCallable
; at: 3:1
((car '(a)) 1)
