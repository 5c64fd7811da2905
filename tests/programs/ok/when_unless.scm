;; when/unless: body sequences, #f when the body does not run.
; expect: (b #f d #f 3)
(list (when (> 1 0) 'a 'b)
      (when #f 'c)
      (unless #f 'd)
      (unless #t 'e)
      (when 0 1 2 3))
