;; An input used only in tests has gradient 0.
; lanes: x=1,-1
; expect: 1, 2
; grad x: 0, 0
(if (> x 0) 1 2)
