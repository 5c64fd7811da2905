;; normalize of a zero vector: NaN by IEEE, finite with protected ops.
; options: protected
; expect: [0 0]
(normalize (zeros 2))
