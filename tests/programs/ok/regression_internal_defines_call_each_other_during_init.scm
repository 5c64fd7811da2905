;; Regression: internal definitions are `letrec*`: `total` is computed by calling `sum`, which
;; calls `square`, defined after `sum`.
; bind: n=3
; expect: 14
(define (run)
  (define (sum k) (if (= k 0) 0 (+ (square k) (sum (- k 1)))))
  (define (square k) (* k k))
  (define total (sum n))
  total)
(run)
