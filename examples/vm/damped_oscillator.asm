; The suite's damped_oscillator: (* A (* (exp (- 0 (* b t))) (cos (* omega t))))
load A
push 0
load b
load t
mul
sub
exp
load omega
load t
mul
cos
mul
mul
