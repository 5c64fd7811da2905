; W3: a conditional, g != 0 ? a x : b / x (lanes whose g differs take different blocks)
; ndvm vm examples/vm/w3.asm --bind g=1 --bind a=2 --bind x=1.5 --bind b=3 --grad
; value 3
load g
branch
  load a
  load x
  mul
else
  load b
  load x
  div
end
