;; Regression: a `#;` with nothing after it was reported as a `quote` error.
; error: BadForm
; at: 5:1
; message: #;
#;
