;; Branches return structurally different values per lane: a symbol on some lanes, a number, a
;; list or a vector on others. Every lane gets its own value; nothing fails.
; lanes: x=1,-2,3,0
; expect: pos, -2, pos, (zero 0)
(if (> x 0) 'pos (if (< x 0) x (list 'zero x)))
