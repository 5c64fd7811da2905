;; Numbers travel through pairs with their gradients.
; bind: x=3
; expect: 17
; grad x: 7
(define p (cons x (list (* x x) 5)))
(+ (car p) (car (cdr p)) (car (cdr (cdr p))) (* 0 (car p)) (- (car p) x))
