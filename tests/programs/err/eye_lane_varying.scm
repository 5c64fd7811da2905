; error: LaneVarying
; at: 4:1
; lanes: n=2,3
(eye n)
