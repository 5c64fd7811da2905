#!/usr/bin/env python3
"""The recurrence task of the search benchmarks: the logistic map iterated a per-row number of
times. Each row has a start x0 in [0.1, 0.9], a rate r in [2.5, 3.6] and a trip count n in
0..10; the target is y = f_r^n(x0) with f_r(s) = r s (1 - s). No closed-form tree expresses it
for every n; the program

  (loop ((s x0) (k 0)) (if (>= k n) s (recur (* r (* s (- 1 s))) (+ k 1))))

does exactly.

  python3 python/bench/recurrence_rows.py OUT_DIR [--train 1000] [--test 1000] [--seed 0]

writes OUT_DIR/train.csv and OUT_DIR/test.csv (columns x0, r, n, y). Only the standard library
is used, so the rows are the same on every machine.
"""

import argparse
import os
import random


def rows(rng, count):
    out = []
    for _ in range(count):
        x0 = rng.uniform(0.1, 0.9)
        r = rng.uniform(2.5, 3.6)
        n = rng.randrange(0, 11)
        s = x0
        for _ in range(n):
            s = r * s * (1.0 - s)
        out.append((x0, r, n, s))
    return out


def write(path, data):
    with open(path, "w") as f:
        f.write("x0,r,n,y\n")
        for x0, r, n, y in data:
            f.write(f"{x0!r},{r!r},{n},{y!r}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--train", type=int, default=1000)
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    write(os.path.join(args.out, "train.csv"), rows(rng, args.train))
    write(os.path.join(args.out, "test.csv"), rows(rng, args.test))


if __name__ == "__main__":
    main()
