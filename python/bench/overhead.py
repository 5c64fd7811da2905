"""Overhead of the Python boundary: value and gradient through NumPy and through the PyTorch op,
beside the same runtime called in a Rust loop (the native figure), in one run.

    python python/bench/overhead.py            # from the repository root, after pip install ./python

Cells (value + exact gradient every time, medians over rounds):
  small  B=1    the suite's damped oscillator, d/d(A, b, omega), per call
  kalman B=1    the 80-step Kalman likelihood, d/d(q, r), per call
  kalman B=256  the same with (q, r) per lane, per lane (call time / 256)
Through torch a call is forward + backward (op(...).sum().backward()).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import time

import numpy as np

import ndvm

REPO = pathlib.Path(__file__).resolve().parents[2]
SMALL = "(* A (* (exp (- 0 (* b t))) (cos (* omega t))))"


def median_seconds(fn, calls: int, rounds: int) -> float:
    """Median over rounds of the mean time of one call, after a warm-up round."""
    for _ in range(max(1, calls // 10)):
        fn()
    samples = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - t) / calls)
    return statistics.median(samples)


def cells(calls_small: int, calls_kalman: int, rounds: int, with_torch: bool):
    kalman_src = (REPO / "examples" / "kalman2d_T80.scm").read_text()
    obs = np.loadtxt(REPO / "examples" / "kalman2d_obs.csv", delimiter=",")
    small = ndvm.Program(SMALL)
    kalman = ndvm.Program(kalman_src)
    rng = np.random.default_rng(0)
    q256, r256 = rng.uniform(0.02, 0.5, 256), rng.uniform(0.02, 0.5, 256)
    setups = [
        ("small", 1, small, dict(A=1.0, b=0.3, omega=2.0, t=1.5), ["A", "b", "omega"], calls_small),
        ("kalman", 1, kalman, dict(q=0.05, r=0.1, obs=ndvm.uniform(obs)), ["q", "r"], calls_kalman),
        ("kalman", 256, kalman, dict(q=q256, r=r256, obs=ndvm.uniform(obs)), ["q", "r"], max(1, calls_kalman // 20)),
    ]
    if with_torch:
        import torch

        torch.set_num_threads(1)
        import ndvm.torch as nt
    out = []
    for name, lanes, program, b, wrt, calls in setups:
        native = statistics.median(program._native_seconds(b, wrt, calls) for _ in range(rounds))
        through_numpy = median_seconds(lambda: program.value_and_grad(b, wrt=wrt), calls, rounds)
        row = dict(program=name, lanes=lanes, native=native, numpy=through_numpy)
        if with_torch:
            op = nt.program_op(program)
            tb = {k: (torch.tensor(v, dtype=torch.float64, requires_grad=True) if k in wrt else v) for k, v in b.items()}
            params = [tb[k] for k in wrt]

            def step():
                for p in params:
                    p.grad = None
                op(tb).sum().backward()

            row["torch"] = median_seconds(step, calls, rounds)
        out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--calls-small", type=int, default=20000)
    ap.add_argument("--calls-kalman", type=int, default=400)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    with_torch = not args.no_torch
    rows = cells(args.calls_small, args.calls_kalman, args.rounds, with_torch)
    info = dict(
        date=datetime.date.today().isoformat(),
        python=platform.python_version(),
        numpy=np.__version__,
        ndvm=ndvm.__version__,
        machine=platform.machine(),
        cores=os.cpu_count(),
    )
    if with_torch:
        import torch

        info["torch"] = torch.__version__
    if args.json:
        print(json.dumps(dict(info=info, rows=rows), indent=2))
        return
    print(" ".join(f"{k}={v}" for k, v in info.items()))
    cols = ["native", "numpy"] + (["torch"] if with_torch else [])
    print(f"{'program':<8} {'B':>4} {'per':<5} " + " ".join(f"{c:>12}" for c in cols) + "   (microseconds)")
    for r in rows:
        per, scale = ("lane", 1e6 / r["lanes"]) if r["lanes"] > 1 else ("call", 1e6)
        print(f"{r['program']:<8} {r['lanes']:>4} {per:<5} " + " ".join(f"{r[c] * scale:>12.2f}" for c in cols))


if __name__ == "__main__":
    main()
