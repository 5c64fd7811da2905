; expect: nonfinite
(normalize (zeros 2))
