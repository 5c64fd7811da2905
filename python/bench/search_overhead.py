#!/usr/bin/env python3
"""The cost of searching from Python: `ndvm search` against `ndvm.search` and
`ndvm.SymbolicRegressor` on the same rows, seed and `max_evals`, alternated in one run.

  python3 python/bench/search_overhead.py [--ndvm target/debug/ndvm] [--max-evals 3000] [--repeats 3]

Give it the binary of the same cargo profile as the installed package (`pip install ./python`
builds release; `.ci/run` builds dev). Each run's wall time includes reading the data (the
command parses the CSV; Python is handed arrays) and the final refit of the front; the fronts
must be equal.
"""

import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np

import ndvm

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRAIN = os.path.join(ROOT, "data", "sr", "llm-sr", "oscillator1", "train.csv")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ndvm", default=os.path.join(ROOT, "target", "debug", "ndvm"))
    ap.add_argument("--max-evals", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    data = np.loadtxt(TRAIN, delimiter=",", skiprows=1)
    X, y = data[:, :2], data[:, 2]
    common = dict(max_evals=args.max_evals, threads=args.threads, seed=1)
    times = {"command": [], "ndvm.search": [], "SymbolicRegressor": []}
    fronts = {}
    for _ in range(args.repeats):
        t = time.perf_counter()
        out = subprocess.run(
            [args.ndvm, "search", "--data", TRAIN, "--target", "a", "--max-evals",
             str(args.max_evals), "--threads", str(args.threads), "--seed", "1", "--format", "json"],
            capture_output=True, text=True, check=True,
        )
        times["command"].append(time.perf_counter() - t)
        fronts["command"] = json.loads(out.stdout)["front"]
        t = time.perf_counter()
        r = ndvm.search(X, y, names=["x", "v"], **common)
        times["ndvm.search"].append(time.perf_counter() - t)
        fronts["ndvm.search"] = r["front"]
        t = time.perf_counter()
        m = ndvm.SymbolicRegressor(progress=False, **common).fit(X, y)
        times["SymbolicRegressor"].append(time.perf_counter() - t)
        fronts["SymbolicRegressor"] = [len(m.result_["front"])]
    same = fronts["command"] == fronts["ndvm.search"]
    base = statistics.median(times["command"])
    print(f"oscillator1, {len(y)} rows, max_evals {args.max_evals}, {args.threads} threads, "
          f"median of {args.repeats}; fronts of the command and ndvm.search equal: {same}")
    print("| how | seconds | against the command |")
    print("| --- | --- | --- |")
    for k, v in times.items():
        med = statistics.median(v)
        print(f"| {k} | {med:.3f} | {med / base:.3f}x |")


if __name__ == "__main__":
    main()
