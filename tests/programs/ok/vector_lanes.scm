;; A per-lane vector input and its per-lane gradient.
; lanes: v=[1,2],[3,4],[0,-1]
; expect: 5, 25, 1
; grad v: [2 4], [6 8], [0 -2]
(dot v v)
