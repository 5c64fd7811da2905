"""ndvm.ray.search at 1, 2 and 4 islands against ndvm.search in one process on the same work.

Each island does the same work (``--evals`` evaluations, its share of ``max_evals``), so with
enough cores the wall time stays flat as islands are added and evaluations per second grow with
them. For each island count: the in-process search (every core's threads over all islands), then
the Ray search (one actor of one CPU per island on a local Ray instance with at least as many
CPUs as islands, more than the machine has when it has fewer cores), alternated ``--repeats``
times; the median wall time, evaluations per second, whether the fronts agree, and Ray's
overhead per migration (a migration's wall time on the driver beyond the slowest island's own
work: moving the states and arrivals, the driver's migration, Ray's scheduling).

    python python/bench/ray_scaling.py [--evals 1500] [--repeats 3] [--out results/DIR]
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--evals", type=int, default=1500, help="evaluations per island")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--islands", default="1,2,4")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    import ray

    import ndvm.ray as nray

    t = np.loadtxt(os.path.join(ROOT, "data", "sr", "llm-sr", "oscillator1", "train.csv"),
                   delimiter=",", skiprows=1)
    X, y = t[:, :2], t[:, 2]
    cores = os.cpu_count() or 1
    counts = [int(k) for k in args.islands.split(",")]
    ray.init(num_cpus=max(max(counts), cores), include_dashboard=False)
    rows = []
    for k in counts:
        kw = dict(islands=k, max_evals=args.evals * k, seed=1, names=["x", "v"])
        here, there, overhead, migrations, same = [], [], [], [], True
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            a = ndvm.search(X, y, threads=cores, **kw)
            here.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            b = nray.search(X, y, **kw)
            there.append(time.perf_counter() - t0)
            overhead.append(b["ray"]["overhead_per_migration"] or 0.0)
            migrations.append(b["ray"]["migrations"])
            same = same and a["front"] == b["front"]
        row = {
            "islands": k,
            "evaluations": args.evals * k,
            "in_process_seconds": statistics.median(here),
            "ray_seconds": statistics.median(there),
            "in_process_evals_per_s": args.evals * k / statistics.median(here),
            "ray_evals_per_s": args.evals * k / statistics.median(there),
            "migrations": statistics.median(migrations),
            "overhead_per_migration_ms": 1e3 * statistics.median(overhead),
            "same_front": same,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    base = rows[0]["ray_evals_per_s"]
    print(f"\n{cores} cores, {args.evals} evaluations per island, median of {args.repeats}")
    print("| islands | in process s | evals/s | Ray s | evals/s | scaling | overhead/migration | "
          "same front |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['islands']} | {r['in_process_seconds']:.2f} | "
              f"{r['in_process_evals_per_s']:.0f} | {r['ray_seconds']:.2f} | "
              f"{r['ray_evals_per_s']:.0f} | {r['ray_evals_per_s'] / base:.2f}x | "
              f"{r['overhead_per_migration_ms']:.1f} ms | {r['same_front']} |")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "ray_scaling.json"), "w") as f:
            json.dump({"cores": cores, "evals_per_island": args.evals, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
