;; recur is in tail position inside cond, when, unless, let, let*, letrec, begin, and, or, if.
; bind: x=2
; expect: 2111111
; grad x: 1000000
(loop ((i 0) (acc 0))
  (cond ((= i 0) (recur 1 (+ acc 1)))
        ((= i 1) (when #t (recur 2 (+ acc 10))))
        ((= i 2) (let ((d 100)) (recur 3 (+ acc d))))
        ((= i 3) (let* ((d 1000)) (begin 'x (recur 4 (+ acc d)))))
        ((= i 4) (and #t (recur 5 (+ acc 10000))))
        ((= i 5) (or #f (recur 6 (+ acc 100000))))
        ((= i 6) (unless #f (letrec ((z 1)) (recur 7 (+ acc (* x 1000000))))))
        ((= i 7) (if #f 0 (recur 8 acc)))
        (else acc)))
