; error: UnboundName
; at: 5:6
; stage: run
; message: `x`
(+ 1 x)
