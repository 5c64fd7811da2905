;; The negative log-likelihood of a D-dimensional Kalman filter over 80 steps: the model of
;; the GPU ceiling experiment (`ndvm bench gpu-ceiling`), written in the object language with
;; the dimension as an input. Inputs: d (the state dimension, the same on every lane), q and r
;; (process and observation noise variances).
;;   F = 0.9 I plus off-diagonal entries (0.3/d) cos(0.7 (i+1)(j+1)); H observes the first two
;;   state components; obs_t = (sin 0.3t, 0.5 cos 0.2t); Q = q I, R = r I; x0 = 0, P0 = I;
;;   each step adds 0.5 (e^T S^-1 e + log det S + 2 log 2 pi).
;;   ndvm run examples/kalman_nd.scm --bind d=8 --bind q=0.05 --bind r=0.1 --grad q,r
;;   ndvm calibrate examples/kalman_nd.scm --bind d=32 --params q,r --init q=0.3,r=0.3 \
;;     --restarts 256 --clamp q=1e-4: --clamp r=1e-4: --precision f32 --device auto
(let* ((k (+ (iota d) 1.0))
       (I (eye d))
       (C (cos (* 0.7 (outer k k))))
       (F (+ (* 0.9 I) (* (/ 0.3 d) (- C (* C I)))))
       (Ft (transpose F))
       (H (mat (ref I 0) (ref I 1)))
       (Ht (transpose H))
       (Q (* q I))
       (R (* r (eye 2))))
  (loop ((t 0) (x (zeros d)) (P I) (L 0.0))
    (if (= t 80)
        L
        (let* ((xp (matvec F x))
               (Pp (+ (matmul (matmul F P) Ft) Q))
               (y (vec (sin (* 0.3 t)) (* 0.5 (cos (* 0.2 t)))))
               (e (- y (matvec H xp)))
               (PHt (matmul Pp Ht))
               (S (+ (matmul H PHt) R))
               (Si (inv S))
               (K (matmul PHt Si))
               (nll (* 0.5 (+ (dot e (matvec Si e)) (log (det S)) 3.675754132818691))))
          (recur (+ t 1)
                 (+ xp (matvec K e))
                 (- Pp (matmul K (matmul H Pp)))
                 (+ L nll))))))
