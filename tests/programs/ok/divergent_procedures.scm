;; The operator itself differs per lane (a primitive on some lanes, another on others).
; lanes: x=1,-1
; expect: 0.8414709848078965, 0.5403023058681398
; grad x: 0.5403023058681398, 0.8414709848078965
((if (> x 0) sin cos) x)
