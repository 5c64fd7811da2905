"""The Python examples of README.md run from the repository root, as a user of a fresh clone
would run them after `pip install ./python`."""

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO, require_torch


def readme_blocks():
    text = (REPO / "README.md").read_text()
    section = text.split("## Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def run(code):
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_the_readme_has_a_numpy_a_search_a_ray_and_a_torch_example():
    blocks = readme_blocks()
    assert len(blocks) == 4
    assert "SymbolicRegressor(" in blocks[1]
    assert "ndvm.ray.search(" in blocks[2]
    assert "import torch" not in "".join(blocks[:3]) and "import torch" in blocks[3]


def test_the_numpy_example_runs():
    out = run(readme_blocks()[0])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 4
    assert "'q': 0.0001" in lines[3] and lines[3].endswith("164.94511133369696")


def test_the_torch_example_runs_and_fits():
    require_torch()
    out = run(readme_blocks()[3])
    assert out.returncode == 0, out.stderr
    a, b = map(float, out.stdout.split())
    assert abs(a - 2.0) < 0.05 and abs(b - 0.5) < 0.05


def test_the_search_example_runs():
    # The same example, bounded by a count instead of the clock and without a bar.
    block = readme_blocks()[1]
    code = block.replace("budget=30", "max_evals=1500, progress=False")
    assert code != block
    out = run(code + "\nassert model.score(X, y) > 0.9\n")
    assert out.returncode == 0, out.stderr
    assert "complexity" in out.stdout


def test_the_ray_example_runs_on_a_local_ray():
    if not os.environ.get("CI"):
        pytest.importorskip("ray")
    block = readme_blocks()[2]
    code = block.replace("budget=30", "max_evals=1000")
    assert code != block
    out = run(code + "\nassert result['summary']['evaluations'] == 1000\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(" 1"), out.stdout
