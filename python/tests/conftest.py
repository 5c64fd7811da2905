"""Shared paths and helpers of the Python package's tests. The data come from the repository
(`data/`, `examples/`), so the tests run from a clone."""

import json
import os
import pathlib

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = REPO / "data"
EXAMPLES = REPO / "examples"

# Programs where IEEE `sqrt`/`log` deliberately differ from the artifact's clamped ones.
CLAMPED = ("sqrt_clamp_neg", "log_clamp_neg")


def suite():
    """The 34 conformance programs with their reference values and gradients."""
    return json.loads((DATA / "suite" / "oracle_refs.json").read_text())["programs"]


def suite_bindings(p):
    """The bindings of a conformance program: its scalars and its matrix, if any."""
    import ndvm

    b = dict(p["scalars"])
    m = p.get("matrix")
    if m:
        b[m["name"]] = ndvm.uniform(np.array(m["data"], dtype=float).reshape(m["rows"], m["cols"]))
    return b


def close(a, b, tol):
    """The conformance tolerance of the Rust tests: |a - b| <= tol (1 + |b|)."""
    if np.isnan(a) and np.isnan(b):
        return True
    if np.isinf(a) or np.isinf(b):
        return a == b
    return abs(a - b) <= tol * (1 + abs(b))


def kalman_source():
    return (EXAMPLES / "kalman2d_T80.scm").read_text()


def kalman_obs():
    return np.loadtxt(EXAMPLES / "kalman2d_obs.csv", delimiter=",")


def require_torch():
    """PyTorch, which CI installs: there a missing torch fails the tests instead of skipping."""
    if os.environ.get("CI"):
        import torch

        return torch
    return pytest.importorskip("torch")


def ndvm_binary():
    """The `ndvm` command-line program, to compare the Python functions with: $NDVM_BIN (set by
    .ci/run, where it must exist), or the debug build of this checkout."""
    import shutil

    path = os.environ.get("NDVM_BIN") or str(REPO / "target" / "debug" / "ndvm")
    if not pathlib.Path(path).exists() or not shutil.which(path):
        if os.environ.get("CI"):
            raise FileNotFoundError(f"the ndvm binary is missing: {path}")
        pytest.skip("no ndvm binary (cargo build -p harness, or set NDVM_BIN)")
    return path


def run_cli(*args):
    import subprocess

    out = subprocess.run(
        [ndvm_binary(), *map(str, args), "--format", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)
