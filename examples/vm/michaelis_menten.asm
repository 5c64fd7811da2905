; The suite's michaelis_menten: (/ (* Vmax S) (+ Km S))
load Vmax
load S
mul
load Km
load S
add
div
