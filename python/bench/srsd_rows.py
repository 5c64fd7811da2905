#!/usr/bin/env python3
"""Rows for the SRSD-Feynman easy set (data/sr/srsd/easy_set.json), generated with a fixed seed.

Each variable is drawn by its sampler as the SRSD benchmark defines them:
  DefaultSampling(lo, hi)  log-uniform: x = 10 ** U(log10 lo, log10 hi)
  SimpleSampling(lo, hi)   uniform on [lo, hi]
  IntegerSampling(lo, hi)  an integer uniform in [lo, hi)
and then given a sign: negated with probability 1/2 when both signs are allowed, always when
only negative values are. Rows whose target is not finite are dropped and drawn again.

  python3 python/bench/srsd_rows.py OUT_DIR [--train 1000] [--test 1000] [--seed 0]

writes OUT_DIR/<name>/train.csv and test.csv (columns x0, x1, ..., y) for every formula, and
OUT_DIR/index.json (name, formula, inputs). Only the standard library is used, so the rows are
the same on every machine.
"""

import argparse
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
EASY = os.path.join(HERE, "..", "..", "data", "sr", "srsd", "easy_set.json")
FUNCTIONS = {"pi": math.pi, "sin": math.sin, "cos": math.cos, "sqrt": math.sqrt, "exp": math.exp,
             "log": math.log, "tan": math.tan, "asin": math.asin, "acos": math.acos,
             "tanh": math.tanh}


def draw(rng, v):
    lo, hi = v["min_value"], v["max_value"]
    kind = v["sampler"]
    if kind == "DefaultSampling":
        x = 10 ** rng.uniform(math.log10(lo), math.log10(hi))
    elif kind == "SimpleSampling":
        x = rng.uniform(lo, hi)
    elif kind == "IntegerSampling":
        x = float(rng.randrange(int(lo), int(hi)))
    else:
        raise ValueError(f"unknown sampler {kind}")
    pos, neg = v.get("uses_positive", True), v.get("uses_negative", False)
    if pos and neg:
        return -x if rng.random() < 0.5 else x
    return -x if neg else x


def rows(rng, formula, variables, n):
    code = compile(formula, "<formula>", "eval")
    out = []
    tries = 0
    while len(out) < n:
        tries += 1
        if tries > 100 * n:
            raise RuntimeError(f"{formula}: too few finite rows")
        xs = {v["var"]: draw(rng, v) for v in variables}
        try:
            y = eval(code, {"__builtins__": {}}, {**FUNCTIONS, **xs})
        except (ZeroDivisionError, ValueError, OverflowError):
            continue
        if isinstance(y, float) and math.isfinite(y):
            out.append([xs[v["var"]] for v in variables] + [y])
    return out


def write(path, header, data):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in data:
            f.write(",".join(repr(x) for x in r) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--train", type=int, default=1000)
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    easy = json.load(open(EASY))
    index = []
    for k, f in enumerate(easy["formulas"]):
        rng = random.Random(args.seed * 1000 + k)
        variables = f["variables"]
        header = [v["var"] for v in variables] + ["y"]
        d = os.path.join(args.out, f["name"])
        os.makedirs(d, exist_ok=True)
        write(os.path.join(d, "train.csv"), header, rows(rng, f["formula"], variables, args.train))
        write(os.path.join(d, "test.csv"), header, rows(rng, f["formula"], variables, args.test))
        index.append({"name": f["name"], "formula": f["formula"], "inputs": header[:-1]})
    with open(os.path.join(args.out, "index.json"), "w") as f:
        json.dump(index, f, indent=1)


if __name__ == "__main__":
    main()
