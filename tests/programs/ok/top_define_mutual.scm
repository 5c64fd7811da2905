;; Top-level mutual recursion: f calls g, defined after it.
; bind: x=1.5
; expect: 4.5
; grad x: 6
(define (f n acc) (if (<= n 0) acc (g (- n 1) (* acc x))))
(define (g n acc) (if (<= n 0) acc (f (- n 1) (+ acc x))))
(f 3 1)
