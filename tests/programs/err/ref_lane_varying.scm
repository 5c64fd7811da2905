; error: LaneVarying
; at: 4:1
; lanes: i=0,1
(ref [1 2 3] i)
