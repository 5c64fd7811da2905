"""The Kalman maximum-likelihood fit (the README's `ndvm calibrate`: q and r of the 80-step 2x2
filter, 30 Adam steps, learning rate 0.08, both clamped at 1e-4 or above) by ndvm, by PyTorch
eager on the exported program, and by JAX with the export compiled once, side by side in one run
at equal final likelihood (the same steps from the same start; the final losses are compared).

    python python/bench/kalman_fit.py [--repeats 5] [--out results/DIR/kalman_fit.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import time

import numpy as np

import ndvm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPS, LR, B1, B2, EPS, FLOOR = 30, 0.08, 0.9, 0.999, 1e-8, 1e-4


def adam(p, g, m, v, t):
    m += (1 - B1) * (g - m)
    v *= B2
    v += (1 - B2) * g * g
    p -= (LR / (1 - B1 ** t)) * (m / (np.sqrt(v) / math.sqrt(1 - B2 ** t) + EPS))
    np.maximum(p, FLOOR, out=p)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import jax
    import jax.numpy as jnp
    import torch

    jax.config.update("jax_enable_x64", True)
    src = open(os.path.join(ROOT, "examples", "kalman2d_T80.scm")).read()
    obs = np.loadtxt(os.path.join(ROOT, "examples", "kalman2d_obs.csv"), delimiter=",")
    prog = ndvm.Program(src)

    def run_ndvm():
        r = ndvm.calibrate(prog, bind={"obs": obs}, params=["q", "r"], init={"q": 0.3, "r": 0.3},
                           lr=LR, steps=STEPS, clamp={"q": (FLOOR, None), "r": (FLOOR, None)})
        return float(r["last_step_loss"]), r

    ft = prog.to_torch()
    tobs = torch.tensor(obs)

    def run_torch():
        q = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
        r = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
        opt = torch.optim.Adam([q, r], lr=LR)
        last = math.nan
        for _ in range(STEPS):
            opt.zero_grad()
            loss = ft(q=q, r=r, obs=tobs)
            loss.backward()
            last = loss.item()
            opt.step()
            with torch.no_grad():
                q.clamp_(min=FLOOR)
                r.clamp_(min=FLOOR)
        return last, (q.item(), r.item())

    fj = prog.to_jax()
    jobs = jnp.asarray(obs)
    vg = jax.value_and_grad(lambda p: fj(q=p[0], r=p[1], obs=jobs))
    t = time.perf_counter()
    vgc = jax.jit(vg).lower(jnp.asarray([0.3, 0.3])).compile()
    compile_s = time.perf_counter() - t

    def run_jax():
        p = np.array([0.3, 0.3])
        m, v = np.zeros(2), np.zeros(2)
        last = math.nan
        for k in range(STEPS):
            val, g = vgc(jnp.asarray(p))
            last = float(val)
            adam(p, np.asarray(g), m, v, k + 1)
        return last, tuple(p)

    times = {"ndvm": [], "torch eager": [], "jax jit": []}
    finals = {}
    for _ in range(args.repeats):
        for name, f in (("ndvm", run_ndvm), ("torch eager", run_torch), ("jax jit", run_jax)):
            t = time.perf_counter()
            loss, _ = f()
            times[name].append(time.perf_counter() - t)
            finals[name] = loss
    rows = []
    print(f"Kalman 2x2, 80 steps, {STEPS} Adam steps at lr {LR}, median of {args.repeats}; JAX "
          f"compiled once in {compile_s:.2f} s")
    print("| fitter | seconds per fit | last-step loss | against ndvm |")
    print("| --- | --- | --- | --- |")
    base = statistics.median(times["ndvm"])
    for name, ts in times.items():
        med = statistics.median(ts)
        rows.append({"fitter": name, "seconds": med, "last_step_loss": finals[name]})
        print(f"| {name} | {med * 1e3:.2f} ms | {finals[name]:.12g} | {med / base:.1f}x |")
    versions = {"jax": jax.__version__, "torch": torch.__version__, "load": os.getloadavg()}
    print(json.dumps(versions))
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump({"rows": rows, "jax_compile_s": compile_s, "versions": versions}, fh,
                      indent=1)


if __name__ == "__main__":
    main()
