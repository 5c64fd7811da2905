;; User-defined map and fold; procedures as arguments and results.
; bind: x=3
; expect: 14
; grad x: 6
(define (map f l) (if (null? l) '() (cons (f (car l)) (map f (cdr l)))))
(define (foldl f acc l) (if (null? l) acc (foldl f (f acc (car l)) (cdr l))))
(define (compose f g) (lambda (v) (f (g v))))
(foldl + 0 (map (compose (lambda (v) (* v v)) (lambda (v) v)) (list 1 2 x)))
