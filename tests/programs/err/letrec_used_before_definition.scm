; error: UsedBeforeDefinition
; at: 4:13
; message: `b`
(letrec ((a b) (b 1)) a)
