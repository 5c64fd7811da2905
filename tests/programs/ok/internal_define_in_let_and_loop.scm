;; Bodies of let, let*, letrec, lambda and loop may start with defines.
; bind: x=2
; expect: 24
; grad x: 6
(let ((a 1))
  (define b (* 2 x))
  (let* ((c 3))
    (define d (+ a b c))
    (loop ((i 0) (acc 0))
      (define step d)
      (if (= i 3) acc (recur (+ i 1) (+ acc step))))))
