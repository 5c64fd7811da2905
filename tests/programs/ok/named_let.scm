;; Named let: a local recursive procedure (x^n by iteration).
; bind: x=1.5 n=4
; expect: 5.0625
; grad x: 13.5
(let iter ((i 0) (acc 1))
  (if (= i n) acc (iter (+ i 1) (* acc x))))
