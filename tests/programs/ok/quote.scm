;; quote and its ' shorthand: symbols, nested lists, brackets, nested quotes, the empty list.
; expect: (a (1 2 (3 b)) (quote c) [1 2] () 5 #t (a . b))
(list 'a '(1 2 (3 b)) ''c '[1 2] '() (quote 5) '#t (cons 'a 'b))
