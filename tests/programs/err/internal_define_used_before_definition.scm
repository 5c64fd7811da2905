; error: UsedBeforeDefinition
; at: 4:13
(define (f)
  (define a b)
  (define b 1)
  a)
(f)
