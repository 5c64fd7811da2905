;; Regression: a literal beyond the f64 range used to read silently as infinity.
; error: UnknownToken
; at: 4:4
(+ 1e400 1)
