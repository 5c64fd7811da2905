; bind: x=0.7
; expect: 4.6027976645879995
; grad x: 5.1605629407558995
(+ (sin x) (cos x) (exp x) (log x) (sqrt x) (abs (- x)))
