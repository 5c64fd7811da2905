;; A loop variable holds a list on some lanes and a number on others mid-loop.
; lanes: x=1,-1
; expect: 6, -5
; grad x: 6, 5
(loop ((i 0) (v x))
  (if (= i 1)
      (if (pair? v) (* 3 (car v)) (* 5 v))
      (recur (+ i 1) (if (> x 0) (list (* 2 v)) v))))
