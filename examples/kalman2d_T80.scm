;; The 80-step 2x2 Kalman filter negative log-likelihood (up to constants) of the paper's
;; conformance suite. Inputs: q and r (process and observation noise variances) and obs,
;; an 80x2 matrix of observations (examples/kalman2d_obs.csv).
;;   ndvm run examples/kalman2d_T80.scm --bind q=0.05 --bind r=0.1 --bind obs=@examples/kalman2d_obs.csv --grad q,r
(loop ((k 0)
       (x  (vec 0.0 0.0))
       (P  (mat (vec 1.0 0.0) (vec 0.0 1.0)))
       (L  0.0))
  (if (= k 80)
      L
      (let* ((Q     (scale q (eye 2)))
             (R     (scale r (eye 2)))
             (Ppred (+ P Q))
             (y     (ref obs k))
             (e     (- y x))
             (S     (+ Ppred R))
             (Sinv  (inv S))
             (Kg    (matmul Ppred Sinv))
             (xnew  (+ x (matvec Kg e)))
             (Pnew  (matmul (- (eye 2) Kg) Ppred))
             (nll   (+ (log (det S)) (dot e (matvec Sinv e)))))
        (recur (+ k 1) xnew Pnew (+ L nll)))))
