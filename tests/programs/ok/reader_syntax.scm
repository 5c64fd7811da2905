;; Comments (line, nested block, datum), #true/#false, exponents, signs, leading dots.
; expect: (3 #t #f 25 -3 0.5 -0.25 1000)
#| a block comment #| nested |# still a comment |#
(list (+ 1 #;(this is skipped) 2) ; trailing comment
      #true #false 2.5e1 -3 .5 -.25 1e3)
