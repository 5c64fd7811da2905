; error: Type
; at: 4:1
; message: `car` expects a pair, got the number 5
(car 5)
