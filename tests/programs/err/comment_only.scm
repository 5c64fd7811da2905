; error: EmptyProgram
; stage: parse
;; Nothing but comments: #| block |# and datum comments do not count as forms either.
#| a block comment |#
#;(+ 1 2)
