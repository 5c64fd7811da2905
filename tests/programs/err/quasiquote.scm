; error: UnknownToken
; at: 3:1
`(a b)
