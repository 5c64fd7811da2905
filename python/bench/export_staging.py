"""The staging crossover: each program of the paper's five-program suite exported to JAX and
compiled once (``jax.jit`` of its value and gradient), against ndvm walking it, and PyTorch eager
on its export, side by side in one run.

For each program: JAX's one-off cost (trace and XLA compile, the first call), the per-step time of
value and gradient for JAX (compiled), PyTorch (eager) and ndvm (``Program.value_and_grad``,
through the Python boundary, as a Python user calls it), the values and gradients' agreement with
ndvm's, and n* = compile / (t_ndvm - t_jax): the steps after which staging pays, where JAX is the
faster per step. One lane, float64, the suite's bindings.

    python python/bench/export_staging.py [--repeats 2000] [--out results/DIR/staging.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

import ndvm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIVE = ["scalar_mul_add", "michaelis_menten", "damped_oscillator", "logistic_map_loop",
        "kalman2d_T80"]


def per_call(f, repeats: int) -> float:
    """Median seconds of one call over ``repeats`` calls, in blocks of 50."""
    f()
    blocks = []
    for _ in range(max(repeats // 50, 3)):
        t = time.perf_counter()
        for _ in range(50):
            f()
        blocks.append((time.perf_counter() - t) / 50)
    return statistics.median(blocks)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=2000)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import jax
    import torch

    jax.config.update("jax_enable_x64", True)
    refs = {p["name"]: p for p in json.load(open(os.path.join(
        ROOT, "data", "suite", "oracle_refs.json")))["programs"]}
    rows = []
    for name in FIVE:
        p = refs[name]
        prog = ndvm.Program(p["src"])
        data = dict(p["scalars"])
        m = p.get("matrix")
        if m:
            data[m["name"]] = np.array(m["data"], dtype=float).reshape(m["rows"], m["cols"])
        wrt = [k for k in p["grads"] if k in p["scalars"]]
        bound = {k: (ndvm.uniform(v) if isinstance(v, np.ndarray) else v) for k, v in data.items()}

        def run_ndvm():
            return prog.value_and_grad(bound, wrt=wrt)

        v_ndvm, g_ndvm = run_ndvm()
        t_ndvm = per_call(run_ndvm, args.repeats)

        f = prog.to_jax()
        rest = {k: v for k, v in data.items() if k not in wrt}
        x0 = tuple(float(data[k]) for k in wrt)

        def loss(*xs):
            return f(**dict(zip(wrt, xs)), **rest)

        vg = jax.value_and_grad(loss, argnums=tuple(range(len(wrt))))
        t = time.perf_counter()
        compiled = jax.jit(vg).lower(*x0).compile()
        compile_s = time.perf_counter() - t
        v_jax, g_jax = compiled(*x0)
        jax.block_until_ready(v_jax)
        t_jax = per_call(lambda: jax.block_until_ready(compiled(*x0)), args.repeats)

        ft = prog.to_torch()
        tdata = {k: torch.tensor(v, dtype=torch.float64) for k, v in rest.items()}

        def run_torch():
            xs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in x0]
            val = ft(**dict(zip(wrt, xs)), **tdata)
            return val, torch.autograd.grad(val, xs)

        v_torch, g_torch = run_torch()
        t_torch = per_call(run_torch, max(args.repeats // 10, 150))

        def agree(v, g):
            gs = [float(x) for x in g]
            want = [float(g_ndvm[k]) for k in wrt]
            rel = max([abs(float(v) - float(v_ndvm)) / max(abs(float(v_ndvm)), 1e-300)] +
                      [abs(a - b) / max(abs(b), 1e-300) for a, b in zip(gs, want)])
            return rel

        gain = t_ndvm - t_jax
        row = {
            "program": name,
            "jax_compile_s": compile_s,
            "jax_step_us": 1e6 * t_jax,
            "torch_step_us": 1e6 * t_torch,
            "ndvm_step_us": 1e6 * t_ndvm,
            "n_star": compile_s / gain if gain > 0 else None,
            "jax_rel_diff": agree(v_jax, g_jax),
            "torch_rel_diff": agree(v_torch, g_torch),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| program | JAX compile | JAX step | PyTorch eager step | ndvm step | n* | "
          "max rel. diff JAX / torch |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        n = "never (JAX not faster per step)" if r["n_star"] is None else f"{r['n_star']:.0f}"
        print(f"| {r['program']} | {r['jax_compile_s'] * 1e3:.1f} ms | {r['jax_step_us']:.1f} us "
              f"| {r['torch_step_us']:.0f} us | {r['ndvm_step_us']:.1f} us | {n} | "
              f"{r['jax_rel_diff']:.1e} / {r['torch_rel_diff']:.1e} |")
    import jax as j

    versions = {"jax": j.__version__, "torch": torch.__version__, "numpy": np.__version__,
                "ndvm": ndvm.__version__, "cores": os.cpu_count(),
                "load": os.getloadavg()}
    print(json.dumps(versions))
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump({"rows": rows, "versions": versions}, fh, indent=1)


if __name__ == "__main__":
    main()
