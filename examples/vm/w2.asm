; W2: a counted loop, twelve steps of the logistic map x <- r x (1 - x)
; ndvm vm examples/vm/w2.asm --bind x0=0.4 --bind r=3.2 --grad
; value 0.513102
load x0
loop 12
  dup          ; x x
  neg
  push 1
  add          ; x (1 - x)
  mul
  load r
  mul          ; r x (1 - x)
end
