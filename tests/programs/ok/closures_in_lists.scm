;; Closures stored in lists, nested captures across two levels.
; bind: a=3
; expect: 18
; grad a: 6
(define fs (list (lambda () a)
                 (let ((k 2)) (lambda () (let ((m (* k a))) ((lambda () (* m 3))))))))
((car (cdr fs)))
