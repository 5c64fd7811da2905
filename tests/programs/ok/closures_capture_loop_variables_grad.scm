; lanes: x=1,2
; expect: 2, 4
; grad x: 2, 2
(define fs (loop ((i 0) (acc '()))
             (if (= i 3) acc (recur (+ i 1) (cons (lambda (y) (* y i x)) acc)))))
((car fs) 1)
