#!/usr/bin/env python3
"""ndvm search against pyoperon, side by side in one run: the same rows, budget, cores and seed.

  python3 python/bench/sr_compare.py llmsr      [--budget 60] [--threads 2] [--datasets a,b] [--seeds 1,2,3]
  python3 python/bench/sr_compare.py srsd       [--budget 20] [--threads 2] [--formulas a,b]
  python3 python/bench/sr_compare.py recurrence [--budget 60] [--threads 2] [--seeds 1,2,3]
  python3 python/bench/sr_compare.py throughput [--budget 20]

Common options: --seed S, --ndvm PATH (default target/release/ndvm), --out FILE.jsonl (one
line per run), --no-operon, --ndvm-args "FLAGS" (more flags for ndvm search). Needs `pip install pyoperon==0.6.2 pandas` for the Operon side.

Operon runs with the setting the search issue fixes as fair and strong: objectives r2 and
length, Levenberg-Marquardt with 10 iterations, population and pool 1000, max length 50, max
depth 10, the symbols add, sub, mul, div, constant, variable, sin, cos, exp, log, sqrt, square,
n_threads = --threads, max_time = --budget, the generation and evaluation caps out of reach, y
standardised before the fit and mapped back. For both tools the model is the front member of
lowest training error, scored by NMSE = mean((f - y)^2) / var(y) on each test file.

`throughput` runs ndvm alone on oscillator1 at 1 and 2 threads and reports fits per second
and rows times nodes per second of the search loop.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SR = os.path.join(ROOT, "data", "sr")

# Published test NMSE (LLM-SR, ICLR 2025, Table 1; data/sr/README.md of the shared data).
PUBLISHED = {
    "oscillator1": {"pysr": (9e-4, 0.31), "llmsr": (1e-6, 2e-4)},
    "oscillator2": {"pysr": (2e-4, 0.0098), "llmsr": (1e-6, 3.81e-5)},
    "bactgrow": {"pysr": (0.0376, 1.0141), "llmsr": (0.0026, 0.0037)},
    "stressstrain": {"pysr": (0.033, 0.13), "llmsr": (0.0162, 0.0516)},
}
OPERON_SYMBOLS = "add,sub,mul,div,constant,variable,sin,cos,exp,log,sqrt,square"


def read_csv(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
        rows = [[float(x) for x in line.split(",")] for line in f if line.strip()]
    return header, rows


def nmse(pred, y):
    n = len(y)
    mean = sum(y) / n
    var = sum((t - mean) ** 2 for t in y) / n
    err = 0.0
    for f, t in zip(pred, y):
        if f is None or not math.isfinite(f):
            return float("inf")
        err += (f - t) ** 2
    return err / n / var


def run_tool(tool, cmd, tests):
    """Runs one tool's command with the test sets; its last output line as JSON and the wall
    time, or an error record."""
    for name, path in tests:
        cmd += ["--test", f"{name}={path}"]
    start = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - start
    if out.returncode != 0:
        return None, {"tool": tool, "error": out.stderr.strip()[-400:], "wall": wall}
    return json.loads(out.stdout.strip().splitlines()[-1]), wall


def run_ndvm(args, train, target, tests, budget, extra=()):
    cmd = [args.ndvm, "search", "--data", train, "--target", target, "--budget", str(budget),
           "--threads", str(args.threads), "--seed", str(args.seed), "--format", "json",
           *args.ndvm_args.split(), *extra]
    v, wall = run_tool("ndvm", cmd, tests)
    if v is None:
        return wall
    best = min(v["front"], key=lambda r: r["train_loss"])
    scores = {name: best["tests"][name]["nmse"] for name, _ in tests}
    scores = {k: (float("inf") if x is None else x) for k, x in scores.items()}
    s = v["summary"]
    return {"tool": "ndvm", "nmse": scores, "wall": wall, "model": best["infix"],
            "complexity": best["complexity"], "fits_per_second": s["fits_per_second"],
            "evaluations": s["evaluations"], "row_nodes_per_second": s["row_nodes_per_second"]}


def run_operon_here(train, target, tests, budget, threads, seed):
    """The Operon side, in this process (called in a child so a crash loses one run)."""
    import numpy as np
    from pyoperon.sklearn import SymbolicRegressor
    header, rows = read_csv(train)
    t = header.index(target)
    cols = [i for i in range(len(header)) if i != t]
    X = np.array([[r[i] for i in cols] for r in rows])
    y = np.array([r[t] for r in rows])
    mu, sd = y.mean(), y.std()
    reg = SymbolicRegressor(
        objectives=["r2", "length"], optimizer="lm", optimizer_iterations=10,
        population_size=1000, pool_size=1000, max_length=50, max_depth=10,
        allowed_symbols=OPERON_SYMBOLS, n_threads=threads, max_time=int(budget),
        generations=10**9, max_evaluations=10**15, random_state=seed)
    start = time.time()
    reg.fit(X, (y - mu) / sd)
    fit_seconds = time.time() - start
    best = min(reg.pareto_front_, key=lambda m: m["mean_squared_error"])
    scores = {}
    for name, path in tests:
        h, rs = read_csv(path)
        ti = h.index(target)
        Xt = np.array([[r[h.index(header[i])] for i in cols] for r in rs])
        yt = [r[ti] for r in rs]
        pred = reg.evaluate_model(best["tree"], Xt) * sd + mu
        scores[name] = nmse([float(p) for p in pred], yt)
    stats = getattr(reg, "stats_", {})
    return {"tool": "operon", "nmse": scores, "fit_seconds": fit_seconds,
            "model": best["model"], "length": best["length"],
            "generations": stats.get("generations"),
            "residual_evaluations": stats.get("residual_evaluations"),
            "jacobian_evaluations": stats.get("jacobian_evaluations")}


def run_operon(args, train, target, tests, budget):
    cmd = [sys.executable, os.path.abspath(__file__), "operon-one", "--train", train,
           "--target", target, "--budget", str(budget), "--threads", str(args.threads),
           "--seed", str(args.seed)]
    r, wall = run_tool("operon", cmd, tests)
    if r is None:
        return wall
    r["wall"] = wall
    return r


def emit(args, rec):
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(rec) + "\n")


def fmt(x):
    return "-" if x is None else ("inf" if x == float("inf") else f"{x:.3g}")


def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def llmsr(args):
    targets = {"oscillator1": "a", "oscillator2": "a", "bactgrow": "db", "stressstrain": "stress"}
    names = args.datasets.split(",") if args.datasets else list(targets)
    seeds = [int(x) for x in args.seeds.split(",")]
    print(f"LLM-SR datasets, {args.budget} s on {args.threads} threads, seeds {seeds}: each run, "
          f"then the median over the seeds")
    print("| dataset | seed | ndvm ID | ndvm OOD | pyoperon ID | pyoperon OOD | PySR ID | PySR OOD | LLM-SR ID | LLM-SR OOD |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    g = lambda r, k: r.get("nmse", {}).get(k)
    for ds in names:
        d = os.path.join(SR, "llm-sr", ds)
        tests = [("id", os.path.join(d, "test_id.csv")), ("ood", os.path.join(d, "test_ood.csv"))]
        train = os.path.join(d, "train.csv")
        p = PUBLISHED[ds]
        runs = []
        for seed in seeds:
            args.seed = seed
            ours = run_ndvm(args, train, targets[ds], tests, args.budget)
            emit(args, {"bench": "llmsr", "dataset": ds, "seed": seed, **ours})
            theirs = run_operon(args, train, targets[ds], tests, args.budget) if not args.no_operon else {}
            if theirs:
                emit(args, {"bench": "llmsr", "dataset": ds, "seed": seed, **theirs})
            runs.append((ours, theirs))
            print(f"| {ds} | {seed} | {fmt(g(ours, 'id'))} | {fmt(g(ours, 'ood'))} | {fmt(g(theirs, 'id'))} | "
                  f"{fmt(g(theirs, 'ood'))} | | | | |", flush=True)
        med = lambda i, k: median([g(r[i], k) for r in runs])
        print(f"| **{ds}** | median | {fmt(med(0, 'id'))} | {fmt(med(0, 'ood'))} | {fmt(med(1, 'id'))} | "
              f"{fmt(med(1, 'ood'))} | {p['pysr'][0]} | {p['pysr'][1]} | "
              f"{p['llmsr'][0]} | {p['llmsr'][1]} |", flush=True)


def srsd(args):
    tmp = tempfile.mkdtemp(prefix="srsd-")
    subprocess.run([sys.executable, os.path.join(HERE, "srsd_rows.py"), tmp], check=True)
    index = json.load(open(os.path.join(tmp, "index.json")))
    if args.formulas:
        keep = set(args.formulas.split(","))
        index = [f for f in index if f["name"] in keep]
    count = {"ndvm": [0, 0], "operon": [0, 0]}
    print(f"SRSD-Feynman easy set, {args.budget} s per formula on {args.threads} threads, seed {args.seed}")
    print("| formula | truth | ndvm test NMSE | pyoperon test NMSE |")
    print("| --- | --- | --- | --- |")
    for f in index:
        d = os.path.join(tmp, f["name"])
        tests = [("test", os.path.join(d, "test.csv"))]
        train = os.path.join(d, "train.csv")
        row = {}
        tools = [("ndvm", run_ndvm)] + ([] if args.no_operon else [("operon", run_operon)])
        for tool, fn in tools:
            r = fn(args, train, "y", tests, args.budget)
            emit(args, {"bench": "srsd", "formula": f["name"], **r})
            e = r.get("nmse", {}).get("test")
            row[tool] = e
            if e is not None:
                count[tool][0] += e <= 1e-3  # R^2 >= 0.999
                count[tool][1] += e < 1e-8
        print(f"| {f['name']} | `{f['formula']}` | {fmt(row.get('ndvm'))} | {fmt(row.get('operon'))} |", flush=True)
    n = len(index)
    for tool, (fitted, recovered) in count.items():
        if tool == "operon" and args.no_operon:
            continue
        print(f"{tool}: {fitted}/{n} fitted (test R^2 >= 0.999), {recovered}/{n} recovered (test NMSE < 1e-8)")
        emit(args, {"bench": "srsd-summary", "tool": tool, "fitted": fitted, "recovered": recovered, "of": n})


def recurrence(args):
    d = os.path.join(SR, "recurrence")
    tests = [("test", os.path.join(d, "test.csv"))]
    train = os.path.join(d, "train.csv")
    seeds = [int(x) for x in args.seeds.split(",")]
    print(f"recurrence, {args.budget} s on {args.threads} threads, seeds {seeds}")
    print("| seed | ndvm test NMSE | ndvm model | pyoperon test NMSE |")
    print("| --- | --- | --- | --- |")
    nmse = lambda r: r.get("nmse", {}).get("test")
    exact = {"ndvm": 0, "operon": 0}
    for seed in seeds:
        args.seed = seed
        ours = run_ndvm(args, train, "y", tests, args.budget)
        emit(args, {"bench": "recurrence", "seed": seed, **ours})
        theirs = run_operon(args, train, "y", tests, args.budget) if not args.no_operon else {}
        if theirs:
            emit(args, {"bench": "recurrence", "seed": seed, **theirs})
        for tool, r in (("ndvm", ours), ("operon", theirs)):
            if nmse(r) is not None and nmse(r) < 1e-12:
                exact[tool] += 1
        print(f"| {seed} | {fmt(nmse(ours))} | `{ours.get('model')}` | {fmt(nmse(theirs))} |", flush=True)
    print(f"test NMSE below 1e-12 (the map found): ndvm {exact['ndvm']}/{len(seeds)}, "
          f"pyoperon {exact['operon']}/{len(seeds) if not args.no_operon else 0}")


def throughput(args):
    d = os.path.join(SR, "llm-sr", "oscillator1")
    tests = [("id", os.path.join(d, "test_id.csv"))]
    print(f"search loop throughput, oscillator1, {args.budget} s")
    print("| threads | fits/s | rows x nodes / s | evaluations |")
    print("| --- | --- | --- | --- |")
    for t in (1, 2):
        args.threads = t
        r = run_ndvm(args, os.path.join(d, "train.csv"), "a", tests, args.budget)
        emit(args, {"bench": "throughput", "threads": t, **r})
        print(f"| {t} | {r['fits_per_second']:.0f} | {r['row_nodes_per_second']:.3g} | {r['evaluations']} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["llmsr", "srsd", "recurrence", "throughput", "operon-one"])
    ap.add_argument("--budget", type=float, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seeds", default="1", help="llmsr, recurrence: comma-separated seeds, one run each")
    ap.add_argument("--ndvm", default=os.path.join(ROOT, "target", "release", "ndvm"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-operon", action="store_true")
    ap.add_argument("--ndvm-args", default="", help="more flags for ndvm search, as one string")
    ap.add_argument("--datasets", default=None)
    ap.add_argument("--formulas", default=None)
    ap.add_argument("--train")
    ap.add_argument("--target")
    ap.add_argument("--test", action="append", default=[])
    args = ap.parse_args()
    if args.budget is None:
        args.budget = 20.0 if args.what in ("srsd", "throughput") else 60.0
    if args.what == "operon-one":
        tests = [tuple(t.split("=", 1)) for t in args.test]
        print(json.dumps(run_operon_here(args.train, args.target, tests, args.budget, args.threads, args.seed)))
        return
    {"llmsr": llmsr, "srsd": srsd, "recurrence": recurrence, "throughput": throughput}[args.what](args)


if __name__ == "__main__":
    main()
