;; Regression: `loop` is a keyword of the language, but the common Scheme idiom binds it with a
;; named let; a binding of `loop` (or `recur`) shadows the keyword.
; bind: n=5
; expect: 15
(let loop ((i 0) (acc 0))
  (if (> i n) acc (loop (+ i 1) (+ acc i))))
