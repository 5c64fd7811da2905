;; Closures made in a loop keep that iteration's variables.
; lanes: x=1,2
; expect: (2 1 0), (4 2 0)
(define fs (loop ((i 0) (acc '()))
             (if (= i 3) acc (recur (+ i 1) (cons (lambda (y) (* y i x)) acc)))))
(list ((car fs) 1) ((car (cdr fs)) 1) ((car (cdr (cdr fs))) 1))
