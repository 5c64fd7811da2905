;; A uniform matrix against per-lane vectors; the uniform input's gradient summed over lanes.
; bind: M=[[1,2],[3,4]] w=[1,1]
; lanes: v=[1,0],[0,1]
; expect: 4, 6
; grad M: [[1 0] [1 0]], [[0 1] [0 1]]
; grad_sum M: [[1 1] [1 1]]
; grad v: [4 6]
(dot w (matvec M v))
