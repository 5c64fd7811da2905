; expect: (-6 1.791759469228055 4 1 0.6931471805599453)
(list (det (mat [4 3] [6 3])) (logdet (mat [4 3] [6 3]))
      (det (mat [2 -1 0] [-1 2 -1] [0 -1 2])) (det (eye 4)) (logdet (scale 2 (eye 1))))
