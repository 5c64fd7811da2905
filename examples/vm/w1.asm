; W1: a closed-form scalar expression, exp(-a x) cos(w x) + b
; ndvm vm examples/vm/w1.asm --bind a=0.3 --bind x=1.5 --bind w=2 --bind b=0.7 --grad
; value 0.068753
load a
load x
mul
neg
exp          ; exp(-a x)
load w
load x
mul
cos          ; cos(w x)
mul
load b
add
