;; Quoted keywords and primitive names are plain symbols.
; expect: (if lambda + car #t #f)
(list 'if 'lambda '+ (car '(car)) (symbol? 'define) (eq? 'if 'else))
