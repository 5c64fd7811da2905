; The suite's scalar_mul_add: (+ (* alpha x) beta)
load alpha
load x
mul
load beta
add
