#!/usr/bin/env python3
"""Fitting one ODE candidate: ndvm against scipy.optimize.least_squares around solve_ivp.

  python3 python/bench/ode_fit.py [--repeats 5] [--ndvm PATH]

For a 2-D and a 3-D ODEBench system (data/ode/odebench), the true right-hand side with every
constant started 50% off (times 1.5) is fitted to trajectory ic0 (512 points), the constants and
the initial state together, by

- ndvm: `ndvm bench ode-fit` (multiple shooting through its RK4 integration program,
  Levenberg-Marquardt on the runtime's exact gradients; the median of --repeats fits, each
  building its problem afresh);
- SciPy: `least_squares` (trust-region reflective, its default, with a finite-difference
  Jacobian) on the residuals of `solve_ivp` (RK45, rtol 1e-8, atol 1e-10) at the observed times,
  the way a Python user fits an ODE model today; the median of --repeats fits.

Both report fitted candidates per second and the final loss: the mean squared residual of the
model integrated from its fitted initial state, over every observation and state.
"""

import argparse
import json
import os
import subprocess
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TRAJ = os.path.join(ROOT, "data", "ode", "odebench", "trajectories")

# id, states, ndvm right-hand sides, numpy right-hand side, true constants.
SYSTEMS = [
    (
        25,
        ["x_0", "x_1"],
        "x_1; (- (- (* c0 x_0)) (* c1 x_1))",
        lambda x, c: [x[1], -c[0] * x[0] - c[1] * x[1]],
        [4.5, 0.43],
    ),
    (
        54,
        ["x_0", "x_1", "x_2"],
        "(* c0 (- x_1 x_0)); (- (- (* c1 x_0) x_1) (* x_0 x_2)); (- (* x_0 x_1) (* c2 x_2))",
        lambda x, c: [c[0] * (x[1] - x[0]), c[1] * x[0] - x[1] - x[0] * x[2], x[0] * x[1] - c[2] * x[2]],
        [5.1, 12.0, 1.67],
    ),
]


def scipy_fit(rhs, t, x, c0):
    from scipy.integrate import solve_ivp
    from scipy.optimize import least_squares

    k = len(c0)

    def residuals(p):
        c, x0 = p[:k], p[k:]
        sol = solve_ivp(lambda _t, y: rhs(y, c), (t[0], t[-1]), x0, t_eval=t, rtol=1e-8, atol=1e-10)
        if not sol.success or sol.y.shape[1] != len(t):
            return np.full(x.size, 1e6)
        return (sol.y.T - x).ravel()

    p0 = np.concatenate([c0, x[0]])
    res = least_squares(residuals, p0)
    loss = float(np.mean(residuals(res.x) ** 2))
    return res.x[:k], loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ndvm", default=os.path.join(ROOT, "target", "release", "ndvm"))
    ap.add_argument("--weights", default="", help="ndvm's continuity weights per phase (its default: 10,100)")
    args = ap.parse_args()
    print(f"{'system':8} {'tool':6} {'fits/s':>10} {'final loss':>12}  constants")
    for sid, states, src, rhs, truth in SYSTEMS:
        path = os.path.join(TRAJ, f"{sid:02d}_ic0.csv")
        data = np.loadtxt(path, delimiter=",", skiprows=1)
        t, x = data[:, 0], data[:, 1:]
        start = [1.5 * c for c in truth]
        params = ",".join(f"c{i}={v!r}" for i, v in enumerate(start))
        out = subprocess.run(
            [args.ndvm, "bench", "ode-fit", "--data", path, "--target", ",".join(states), "--rhs", src,
             "--params", params, "--repeats", str(max(args.repeats, 5) * 4)]
            + (["--weights", args.weights] if args.weights else []),
            capture_output=True, text=True, check=True)
        v = json.loads(out.stdout)
        mine = [v["params"][f"c{i}"] for i in range(len(truth))]
        print(f"{sid:<8} {'ndvm':6} {v['fits_per_second']:>10.2f} {v['final_loss']:>12.3e}  {np.round(mine, 6).tolist()}")
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            c, loss = scipy_fit(rhs, t, x, np.array(start))
            times.append(time.perf_counter() - t0)
        med = sorted(times)[len(times) // 2]
        print(f"{sid:<8} {'scipy':6} {1 / med:>10.2f} {loss:>12.3e}  {np.round(c, 6).tolist()}")
        print(f"{'':8} ndvm / scipy: {v['fits_per_second'] * med:.0f}x the fits per second")


if __name__ == "__main__":
    main()
