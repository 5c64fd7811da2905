;; modulo takes the sign of the divisor, remainder that of the dividend (standard Scheme).
; expect: (1 1 -1 -1 1 -1 1 -1 0 0 1.5 0.5 -1.5)
(list (modulo 7 2) (modulo -7 2) (modulo 7 -2) (modulo -7 -2)
      (remainder 7 2) (remainder -7 2) (remainder 7 -2) (remainder -7 -2)
      (modulo 6 3) (modulo -6 3)
      (modulo 7.5 2) (modulo -7.5 2) (remainder -7.5 -2))
