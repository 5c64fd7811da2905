;; A `(test)` clause yields the test's value; no matching clause gives #f; clause bodies are
;; sequences.
; lanes: x=20,3,-1
; expect: (big 3 #f), (3 3 #f), (neg 3 #f)
(list (cond ((> x 10) 'big)
            ((and (> x 0) x))
            (else 'neg))
      (cond (#f 1) ((+ 1 2)) (else 4))
      (cond ((< 1 0) 'never) ((> 0 1) 'never)))
