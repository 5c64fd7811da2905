; error: Unclosed
; at: 3:7
(vsum [1 2 3
