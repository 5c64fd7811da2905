; The suite's logistic_map_loop: sixteen steps of x <- r (x (1 - x)) from x0
load x0
loop 16
  dup
  neg
  push 1
  add
  mul
  load r
  mul
end
