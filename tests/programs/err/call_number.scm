; error: NotCallable
; at: 4:1
(define k 5)
(k 1)
