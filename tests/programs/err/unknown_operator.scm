; error: UnknownOperator
; at: 4:2
; message: frobnicate
(frobnicate 1 2)
