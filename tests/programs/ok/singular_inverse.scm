;; The inverse of a singular matrix has non-finite entries; it is not an error.
; expect: nonfinite
(inv (mat [1 2] [2 4]))
