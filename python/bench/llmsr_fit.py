#!/usr/bin/env python3
"""The LLM-SR fitting protocol against ndvm on the same programs, in one run.

  python3 python/bench/llmsr_fit.py [--programs 40] [--seed 0] [--threads 2]

LLM-SR fits each proposed program by `scipy.optimize.minimize(loss, [1.0] * 10,
method="BFGS")`: finite-difference gradients of the MSE, ten parameters starting at 1.0. This
script draws programs of the kind it proposes for oscillator1 (`a = f(x, v)`: sums of terms, some
nonlinear in their parameters, up to ten parameters), fits each that way, and fits the same
programs with ndvm (`ndvm.search` with a proposer that sends them all, `proposer_only`, every
training row, Levenberg-Marquardt with its defaults, parameters starting at 1.0). It reports
candidates per second for both and compares the fitted training MSE program by program.
"""

import argparse
import os
import random
import time

import numpy as np
from scipy.optimize import minimize

import ndvm

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRAIN = os.path.join(ROOT, "data", "sr", "llm-sr", "oscillator1", "train.csv")

# Terms as (s-expression, NumPy expression) with `P` where a new parameter goes.
LINEAR = [("x", "x"), ("v", "v"), ("(* x v)", "x*v"), ("(* x x x)", "x**3"),
          ("(* v v v)", "v**3"), ("(sin x)", "np.sin(x)"), ("(* x (cos x))", "x*np.cos(x)"),
          ("(* x x v)", "x**2*v"), ("(* v (abs v))", "v*np.abs(v)")]
NONLINEAR = [("(sin (* P x))", "np.sin(P*x)"), ("(exp (* P v))", "np.exp(P*v)"),
             ("(cos (* P v))", "np.cos(P*v)")]


def program(rng):
    """One candidate: its s-expression and NumPy source over p[0..k-1]."""
    terms = []
    k = 0
    for _ in range(rng.randint(3, 6)):
        s, n = rng.choice(LINEAR + NONLINEAR)
        while "P" in s:
            s = s.replace("P", f"p{k}", 1)
            n = n.replace("P", f"p[{k}]", 1)
            k += 1
        terms.append((f"(* p{k} {s})", f"p[{k}]*{n}"))
        k += 1
        if k >= 9:
            break
    src = "(+ " + " ".join(t[0] for t in terms) + ")"
    py = " + ".join(t[1] for t in terms)
    return src, py, k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    data = np.loadtxt(TRAIN, delimiter=",", skiprows=1)
    x, v, a = data[:, 0], data[:, 1], data[:, 2]
    rng = random.Random(args.seed)
    progs = [program(rng) for _ in range(args.programs)]

    t = time.perf_counter()
    scipy_loss = []
    for _, py, _ in progs:
        f = eval("lambda p, x, v: " + py, {"np": np})  # noqa: S307 - the script's own programs
        loss = lambda p: float(np.mean((f(p, x, v) - a) ** 2))  # noqa: E731
        r = minimize(loss, [1.0] * 10, method="BFGS")
        scipy_loss.append(r.fun)
    scipy_s = time.perf_counter() - t

    answers = {}

    def propose(results, front):
        for res in results:
            answers[res["id"]] = res
        if front or results:
            return []
        return [{"src": s, "init": {f"p{i}": 1.0 for i in range(k)}, "id": i}
                for i, (s, _, k) in enumerate(progs)]

    # The front's final refit on every row is part of a search; it is timed too.
    t = time.perf_counter()
    r = ndvm.search(np.column_stack([x, v]), a, names=["x", "v"], proposer=propose,
                    proposer_only=True, fit_rows=0, threads=args.threads, budget=600)
    ndvm_s = time.perf_counter() - t
    ndvm_loss = [answers[i]["train_loss"] if answers[i]["error"] is None else float("inf")
                 for i in range(len(progs))]
    failed = [answers[i]["error"] for i in range(len(progs)) if answers[i]["error"]]
    if failed:
        print("ndvm failures:", failed[:3])
    ratio = [n / s if s > 0 else float("nan") for n, s in zip(ndvm_loss, scipy_loss)]
    better = sum(n < s * (1 - 1e-6) for n, s in zip(ndvm_loss, scipy_loss))
    worse = sum(n > s * (1 + 1e-6) for n, s in zip(ndvm_loss, scipy_loss))
    print(f"oscillator1, {len(a)} rows, {len(progs)} programs of up to 10 parameters, seed {args.seed}")
    print("| fitter | seconds | candidates per second |")
    print("| --- | --- | --- |")
    print(f"| scipy BFGS, finite differences, 10 parameters at 1.0 (LLM-SR) | {scipy_s:.2f} | "
          f"{len(progs) / scipy_s:.1f} |")
    print(f"| ndvm, LM on the exact Jacobian, {args.threads} threads | {ndvm_s:.2f} | "
          f"{len(progs) / ndvm_s:.1f} |")
    print(f"training MSE, ndvm against scipy, program by program: lower on {better}, higher on "
          f"{worse}, equal (1e-6) on {len(progs) - better - worse}; median ratio "
          f"{float(np.median(ratio)):.3g}, range {min(ratio):.3g} to {max(ratio):.3g}")
    print(f"summary: {r['summary']['evaluations']} evaluations, {r['summary']['failed']} failed")


if __name__ == "__main__":
    main()
