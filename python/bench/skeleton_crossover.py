"""The skeleton-cached crossover: JAX compiles a candidate's whole fit once per skeleton (its
literal constants lifted into arguments, the 50 Adam steps a `lax.fori_loop`, one dispatch per
fit) and reuses it for every constant-only variant; ndvm decodes and fits each variant as a
program of its own (`ndvm cosearch` over a stream of the variants). Side by side in one run, on
the damped-oscillator stream's first candidates, the co-search protocol (50 Adam steps, learning
rate 0.05, 44 rows), float64, one core.

Per skeleton: JAX's compile, its time per fit, ndvm's time per fit, and n* = compile / (t_ndvm -
t_jax), the variants after which compiling once pays (none where JAX is not faster per fit).

    python python/bench/skeleton_crossover.py [--skeletons 10] [--variants 100] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np

import ndvm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d*(?:[eE][-+]?\d+)?")


def lift(src: str):
    """The source with each decimal literal an input `kN`, and the literals."""
    values = []

    def repl(m):
        values.append(float(m.group(0)))
        return f"k{len(values) - 1}"

    return NUMBER.sub(repl, src), values


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skeletons", type=int, default=10)
    ap.add_argument("--variants", type=int, default=100)
    ap.add_argument("--ndvm", default=os.path.join(ROOT, "target", "release", "ndvm"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import jax
    import jax.numpy as jnp
    from jax import lax

    jax.config.update("jax_enable_x64", True)
    import cosearch_baselines as cb

    cands, inits, split = cb.load("damped_oscillator")
    (xt, yt), (xh, yh) = split["train"], split["holdout"]
    xt, xh = jnp.asarray(xt["x"]), jnp.asarray(xh["x"])
    jyt, jyh = jnp.asarray(yt), jnp.asarray(yh)
    rows, stream, init_lines = [], [], []
    for i, cand in enumerate(cands[: args.skeletons]):
        lifted, consts = lift(cand["src"])
        params = cand["params"]
        f = ndvm.export.to_jax(lifted)
        ks = [f"k{j}" for j in range(len(consts))]

        def fit(p0, c, f=f, params=params, ks=ks):
            def loss(p, x, y):
                one = lambda xv: f(**dict(zip(params, p)), **dict(zip(ks, c)), x=xv)  # noqa: E731
                return jnp.mean((jax.vmap(one)(x) - y) ** 2)

            vg = jax.value_and_grad(loss)

            def step(t, s):
                p, m, v, _ = s
                val, g = vg(p, xt, jyt)
                m = m + (1 - 0.9) * (g - m)
                v = v * 0.999 + (1 - 0.999) * g * g
                k = t + 1.0
                p = p - (0.05 / (1 - 0.9 ** k)) * (m / (jnp.sqrt(v) / jnp.sqrt(1 - 0.999 ** k)
                                                        + 1e-8))
                return p, m, v, val

            z = jnp.zeros_like(p0)
            p, _, _, last = lax.fori_loop(0, 50, step, (p0, z, z, jnp.asarray(0.0)))
            return last, loss(p, xh, jyh)

        variants = []
        for j in range(args.variants):
            c = [v * (1 + 0.01 * j) for v in consts]
            init = inits[(j % 20, i)]
            variants.append((c, [init[k] for k in params]))
            src = lifted
            for n, v in enumerate(c):
                src = re.sub(rf"\bk{n}\b", repr(v), src)
            stream.append({"src": src, "params": params})
            init_lines.append({"cycle": 0, "index": len(stream) - 1, "init": init})
        p0 = jnp.asarray(variants[0][1], dtype=float)
        c0 = jnp.asarray(variants[0][0] or [0.0], dtype=float)[: len(consts)]
        t = time.perf_counter()
        fitc = jax.jit(fit).lower(p0, c0).compile()
        compile_s = time.perf_counter() - t
        t = time.perf_counter()
        for c, p in variants:
            last, held = fitc(jnp.asarray(p, dtype=float),
                              jnp.asarray(c or [0.0], dtype=float)[: len(consts)])
            jax.block_until_ready(held)
        per_fit = (time.perf_counter() - t) / len(variants)
        rows.append({"candidate": i, "src": cand["src"], "constants": len(consts),
                     "jax_compile_s": compile_s, "jax_fit_ms": 1e3 * per_fit})
    # ndvm: every variant a program of its own, decoded and fitted.
    with tempfile.TemporaryDirectory() as tmp:
        s, n = os.path.join(tmp, "stream.jsonl"), os.path.join(tmp, "inits.jsonl")
        with open(s, "w") as fh:
            fh.writelines(json.dumps(x) + "\n" for x in stream)
        with open(n, "w") as fh:
            fh.writelines(json.dumps(x) + "\n" for x in init_lines)
        d = os.path.join(ROOT, "data", "cosearch", "damped_oscillator.csv")
        best = math.inf
        for _ in range(3):
            out = subprocess.run([args.ndvm, "cosearch", "--stream", s, "--data", d, "--inits", n,
                                  "--max-fits", str(len(stream)), "--threads", "1",
                                  "--precision", "f64", "--format", "json"],
                                 capture_output=True, text=True, check=True)
            best = min(best, json.loads(out.stdout)["summary"]["seconds"])
    ndvm_ms = 1e3 * best / len(stream)
    print(f"damped oscillator, {args.variants} constant-only variants of each of "
          f"{args.skeletons} skeletons; ndvm {ndvm_ms:.3f} ms per fit (decode included)")
    print("| candidate | constants | JAX compile | JAX per fit | ndvm per fit | n* |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        gain = ndvm_ms - r["jax_fit_ms"]
        r["ndvm_fit_ms"] = ndvm_ms
        r["n_star"] = 1e3 * r["jax_compile_s"] / gain if gain > 0 else None
        ns = "never" if r["n_star"] is None else f"{r['n_star']:.0f}"
        print(f"| {r['candidate']} | {r['constants']} | {r['jax_compile_s'] * 1e3:.0f} ms | "
              f"{r['jax_fit_ms']:.3f} ms | {ndvm_ms:.3f} ms | {ns} |")
    print(json.dumps({"median_jax_compile_s": statistics.median(r["jax_compile_s"] for r in rows),
                      "median_jax_fit_ms": statistics.median(r["jax_fit_ms"] for r in rows),
                      "load": os.getloadavg()}))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
