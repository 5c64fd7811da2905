;; A singular matrix: det is 0, logdet is -inf; not errors.
; expect: (0 -inf.0)
(list (det (mat [1 2] [2 4])) (logdet (mat [1 2] [2 4])))
