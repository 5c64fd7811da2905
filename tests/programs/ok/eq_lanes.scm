; lanes: x=1,2
; expect: same, different
(if (eq? x 1) 'same 'different)
