;; Mutually recursive internal functions, per-lane recursion depth, symbols per lane.
; lanes: n=3,4,7,0
; expect: odd, even, odd, even
(define (parity k)
  (define (ev? m) (if (= m 0) #t (od? (- m 1))))
  (define (od? m) (if (= m 0) #f (ev? (- m 1))))
  (if (ev? k) 'even 'odd))
(parity n)
