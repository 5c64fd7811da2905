;; A small filter-like program: matrices, solve, logdet, loops, per-lane data.
; lanes: y=1,2
; bind: q=0.5
; tol: 1e-9
; expect: 1.8862943611198906, 2.636294361119891
; grad q: 1.5, 0.75
(define P (mat [1 0] [0 1]))
(define (step P) (+ P (scale q (eye 2))))
(define S (loop ((i 0) (P P)) (if (= i 2) P (recur (+ i 1) (step P)))))
(+ (logdet S) (* 0.5 (dot (solve S [y 1]) [y 1])))
