; error: UsedBeforeDefinition
; at: 3:11
(define a b)
(define b 1)
a
