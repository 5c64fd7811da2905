"""The co-search replay protocol run by what a Python user would pick instead of ndvm, side by
side with ``ndvm cosearch`` in one run.

The paper's protocol: fit n calibrates candidate n mod len of the stream in cycle n div len from
that cycle's initial values, 50 Adam steps (learning rate 0.05, PyTorch's Adam) on the training
MSE with the candidate's parameters shared by every training row (44 lanes), a non-finite loss
failing the fit; then the held-out R^2, a success above 0.9. Each fitter replays the same fits in
the same order:

- ndvm: ``ndvm cosearch --precision f64 --threads 1`` (the release build);
- JAX, a jit per candidate: the candidate exported (``ndvm.export.to_jax``), its value and
  gradient over the rows (``jax.vmap``) compiled once per candidate and reused by its later
  cycles, Adam on the host; the compile share of the time is reported;
- JAX eager: the same without ``jit`` (only the first ``--eager-fits`` fits: it is slow);
- PyTorch eager: the candidate exported (``to_torch``), the rows as one tensor, ``torch.optim.Adam``.

Reported: fits per second, seconds to the first success (from the start, compiles included),
successes, and how many fits agree with ndvm's (held-out R^2 within 1e-6, and the same success).

    python python/bench/cosearch_baselines.py [--stream damped_oscillator] [--fits 4940]
        [--eager-fits 247] [--ndvm target/release/ndvm] [--out results/DIR/NAME.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import tempfile
import time
from typing import Any, Callable, Dict, List

import numpy as np

import ndvm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPS, LR, B1, B2, EPS = 50, 0.05, 0.9, 0.999, 1e-8


def load(stream: str):
    d = os.path.join(ROOT, "data", "cosearch")
    cands = [json.loads(x) for x in open(os.path.join(d, f"{stream}_candidates.jsonl"))]
    inits = {}
    for line in open(os.path.join(d, f"{stream}_inits.jsonl")):
        r = json.loads(line)
        inits[(r["cycle"], r["index"])] = r["init"]
    import csv

    rows = list(csv.DictReader(open(os.path.join(d, f"{stream}.csv"))))
    cols = [c for c in rows[0] if c not in ("y", "split")]
    split = {}
    for part in ("train", "holdout"):
        sel = [r for r in rows if r["split"] == part] or [r for r in rows if r["split"] != "train"]
        split[part] = ({c: np.array([float(r[c]) for r in sel]) for c in cols},
                       np.array([float(r["y"]) for r in sel]))
    return cands, inits, split


def adam(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, t: int) -> None:
    """PyTorch's Adam step, as ndvm's calibration takes it."""
    m += (1 - B1) * (g - m)
    v *= B2
    v += (1 - B2) * g * g
    p -= (LR / (1 - B1 ** t)) * (m / (np.sqrt(v) / math.sqrt(1 - B2 ** t) + EPS))


def r2(mse: float, y: np.ndarray) -> float:
    return 1.0 - mse / float(np.var(y))


def replay(name: str, fits: int, cands, inits, split,
           fit_one: Callable[[int, Dict[str, Any], Dict[str, float]], Dict[str, Any]]):
    out: List[Dict[str, Any]] = []
    start = time.perf_counter()
    first = None
    for n in range(fits):
        i, c = n % len(cands), n // len(cands)
        try:
            rec = fit_one(i, cands[i], inits[(c, i)])
        except ndvm.ExportError as e:
            rec = {"error": f"export: {e}"}
        except Exception as e:  # noqa: BLE001 - a failing fit is recorded, the replay goes on
            rec = {"error": f"{type(e).__name__}: {e}"}
        rec.update(cycle=c, index=i)
        out.append(rec)
        if first is None and (rec.get("held_r2") or -1) > 0.9:
            first = time.perf_counter() - start
    seconds = time.perf_counter() - start
    return {"tool": name, "fits": fits, "seconds": seconds, "fits_per_second": fits / seconds,
            "first_success_seconds": first,
            "successes": sum((r.get("held_r2") or -1) > 0.9 for r in out), "records": out}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stream", default="damped_oscillator")
    ap.add_argument("--fits", type=int, default=None, help="default: every init of the stream")
    ap.add_argument("--eager-fits", type=int, default=None, help="JAX eager (default: one cycle)")
    ap.add_argument("--ndvm", default=os.path.join(ROOT, "target", "release", "ndvm"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import jax
    import jax.numpy as jnp
    import torch

    jax.config.update("jax_enable_x64", True)
    cands, inits, split = load(args.stream)
    fits = args.fits or len(inits)
    eager_fits = min(args.eager_fits or len(cands), fits)
    (xt, yt), (xh, yh) = split["train"], split["holdout"]
    runs = []

    # ndvm
    d = os.path.join(ROOT, "data", "cosearch")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fits.jsonl")
        t = time.perf_counter()
        res = subprocess.run(
            [args.ndvm, "cosearch", "--stream", os.path.join(d, f"{args.stream}_candidates.jsonl"),
             "--data", os.path.join(d, f"{args.stream}.csv"),
             "--inits", os.path.join(d, f"{args.stream}_inits.jsonl"), "--max-fits", str(fits),
             "--threads", "1", "--precision", "f64", "--out", path, "--format", "json"],
            capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t
        summary = json.loads(res.stdout)["summary"]
        records = [json.loads(x) for x in open(path)]
    runs.append({"tool": "ndvm", "fits": fits, "seconds": summary["seconds"], "wall": wall,
                 "fits_per_second": summary["fits_per_second"],
                 "first_success_seconds": summary["first_success_seconds"],
                 "successes": summary["successes"], "records": records})
    reference = {(r["cycle"], r["index"]): r for r in records}

    # JAX, a jit per candidate
    compiled: Dict[int, Any] = {}
    compile_s = [0.0]

    def jax_fit(i: int, cand: Dict[str, Any], init: Dict[str, float], jit: bool = True):
        params = cand["params"]
        if i not in compiled or not jit:
            f = ndvm.export.to_jax(cand["src"])
            data = [k for k in f.inputs if k not in params]

            def loss(p, cols, y):
                one = lambda *row: f(**dict(zip(params, p)), **dict(zip(data, row)))  # noqa: E731
                pred = jax.vmap(one)(*cols)
                return jnp.mean((pred - y) ** 2)

            vg = jax.value_and_grad(loss)
            cols_t = [jnp.asarray(xt[k]) for k in data]
            cols_h = [jnp.asarray(xh[k]) for k in data]
            if jit:
                t = time.perf_counter()
                p0 = jnp.asarray([init[k] for k in params], dtype=float)
                vgc = jax.jit(vg).lower(p0, cols_t, jnp.asarray(yt)).compile()
                lossc = jax.jit(loss).lower(p0, cols_h, jnp.asarray(yh)).compile()
                compile_s[0] += time.perf_counter() - t
                compiled[i] = (vgc, lossc, cols_t, cols_h)
            else:
                return run_fit(vg, loss, cols_t, cols_h, params, init)
        vgc, lossc, cols_t, cols_h = compiled[i]
        return run_fit(vgc, lossc, cols_t, cols_h, params, init)

    def run_fit(vg, loss, cols_t, cols_h, params, init):
        p = np.array([init[k] for k in params], dtype=float)
        m, v = np.zeros_like(p), np.zeros_like(p)
        last = math.nan
        for step in range(STEPS):
            val, g = vg(jnp.asarray(p), cols_t, jnp.asarray(yt))
            val = float(val)
            if not math.isfinite(val):
                return {"error": f"step {step}: non-finite loss"}
            last = val
            adam(p, np.asarray(g, dtype=float), m, v, step + 1)
        held = float(loss(jnp.asarray(p), cols_h, jnp.asarray(yh)))
        return {"train_loss": last, "held_mse": held, "held_r2": r2(held, yh)}

    run = replay("jax-jit", fits, cands, inits, split, jax_fit)
    run["compile_seconds"] = compile_s[0]
    run["compile_share"] = compile_s[0] / run["seconds"]
    runs.append(run)
    runs.append(replay("jax-eager", eager_fits, cands, inits, split,
                       lambda i, c, init: jax_fit(i, c, init, jit=False)))

    # PyTorch eager
    tt = {k: torch.tensor(v) for k, v in xt.items()}
    th = {k: torch.tensor(v) for k, v in xh.items()}
    ty, tyh = torch.tensor(yt), torch.tensor(yh)
    made: Dict[int, Any] = {}

    def torch_fit(i: int, cand: Dict[str, Any], init: Dict[str, float]):
        params = cand["params"]
        if i not in made:
            made[i] = ndvm.export.to_torch(cand["src"])
        f = made[i]
        data = [k for k in f.inputs if k not in params]
        ps = [torch.tensor(float(init[k]), dtype=torch.float64, requires_grad=True)
              for k in params]
        opt = torch.optim.Adam(ps, lr=LR)
        last = math.nan
        for step in range(STEPS):
            opt.zero_grad()
            pred = f(**dict(zip(params, ps)), **{k: tt[k] for k in data})
            loss = ((pred - ty) ** 2).mean()
            if not math.isfinite(loss.item()):
                return {"error": f"step {step}: non-finite loss"}
            loss.backward()
            last = loss.item()
            opt.step()
        with torch.no_grad():
            pred = f(**dict(zip(params, ps)), **{k: th[k] for k in data})
            held = float(((pred - tyh) ** 2).mean())
        return {"train_loss": last, "held_mse": held, "held_r2": r2(held, yh)}

    runs.append(replay("torch-eager", fits, cands, inits, split, torch_fit))

    def agreement(run):
        same = 0
        for r in run["records"]:
            ref = reference.get((r["cycle"], r["index"]))
            a, b = r.get("held_r2"), ref.get("held_r2") if ref else None
            if a is None and b is None:
                same += 1
            elif a is not None and b is not None and abs(a - b) <= 1e-6:
                same += 1
        return same

    print(f"\n{args.stream}: {len(cands)} candidates, {fits} fits ({eager_fits} for JAX eager), "
          f"{STEPS} Adam steps, {len(yt)} training rows, float64, one core")
    print("| fitter | fits | seconds | fits/s | first success | successes | agree with ndvm | "
          "compile share |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in runs:
        fs = r["first_success_seconds"]
        share = f"{100 * r['compile_share']:.0f}%" if "compile_share" in r else ""
        print(f"| {r['tool']} | {r['fits']} | {r['seconds']:.2f} | {r['fits_per_second']:.1f} | "
              f"{'none' if fs is None else f'{fs:.3f} s'} | {r['successes']} | "
              f"{agreement(r)} / {r['fits']} | {share} |")
    versions = {"jax": jax.__version__, "torch": torch.__version__, "numpy": np.__version__,
                "load": os.getloadavg()}
    print(json.dumps(versions))
    if args.out:
        os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
        with open(args.out, "w") as fh:
            json.dump({"stream": args.stream, "runs": [{k: v for k, v in r.items()
                                                        if k != "records"} for r in runs],
                       "agreement": {r["tool"]: agreement(r) for r in runs},
                       "versions": versions}, fh, indent=1)


if __name__ == "__main__":
    main()
