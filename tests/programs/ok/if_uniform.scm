;; `if` with and without an else branch; only #f is false (0 and '() are true).
; expect: (yes no #f 2 zero-is-true empty-is-true)
(list (if (< 1 2) 'yes 'no)
      (if (> 1 2) 'yes 'no)
      (if #f 1)
      (if #t 2)
      (if 0 'zero-is-true 'zero-is-false)
      (if '() 'empty-is-true 'empty-is-false))
