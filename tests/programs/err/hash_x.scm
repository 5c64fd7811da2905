; error: UnknownToken
; at: 3:1
#x1F
