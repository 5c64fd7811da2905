; W4: a small summed matrix-vector product, the sum over i of m_i . v
; ndvm vm examples/vm/w4.asm --bind m0=[1,2,-1] --bind m1=[.5,-.5,2] --bind m2=[-1,1,.5] --bind v=[1,.5,-2] --grad
; value -1.25
load m0
load v
dot
load m1
load v
dot
add
load m2
load v
dot
add
