"""ndvm.cosearch against the paper's reference fits and `ndvm cosearch`."""

import json

import numpy as np

import ndvm
from conftest import DATA, run_cli

STREAM = DATA / "cosearch" / "damped_oscillator_candidates.jsonl"
TASK = DATA / "cosearch" / "damped_oscillator.csv"
INITS = DATA / "cosearch" / "damped_oscillator_inits.jsonl"
REFERENCE = DATA / "cosearch" / "damped_oscillator_reference_fits.jsonl"


def test_two_cycles_of_the_protected_f32_replay_agree_with_the_papers_fits():
    r = ndvm.cosearch(STREAM, TASK, inits=INITS, max_fits=494, threads=2, precision="f32",
                      protected_ops=True, reference=REFERENCE)
    a = r["agreement"]
    assert a["compared"] == 494
    assert a["agree"] >= 0.97 * 494
    assert a["successes_matched"] == a["reference_successes"]
    assert r["summary"]["fits"] == 494 == len(r["fits"]) == len(r["finished_at"])
    assert [(f["cycle"], f["index"]) for f in r["fits"][245:249]] == [(0, 245), (0, 246), (1, 0), (1, 1)]


def test_fits_match_the_command_line_and_do_not_depend_on_threads():
    args = dict(inits=INITS, max_fits=120)
    one = ndvm.cosearch(STREAM, TASK, threads=1, **args)
    two = ndvm.cosearch(STREAM, TASK, threads=2, **args)
    assert one["fits"] == two["fits"]
    cli = run_cli("cosearch", "--stream", STREAM, "--data", TASK, "--inits", INITS,
                  "--max-fits", "120", "--threads", "2", "--out", "/dev/null")
    assert cli["summary"]["successes"] == one["summary"]["successes"]
    assert cli["summary"]["best_r2"] == one["summary"]["best_r2"]
    assert cli["summary"]["failed"] == one["summary"]["failed"]


def test_a_stream_given_as_dicts_fits_like_the_file():
    cands = [json.loads(line) for line in STREAM.read_text().splitlines()[:20]]
    cands.append({"src": "(+ a"})  # malformed: no params, and does not parse
    cands.append({"src": "(+ a", "params": ["a"]})  # does not parse
    r = ndvm.cosearch(cands, TASK, inits=INITS, max_fits=22, threads=1)
    from_file = ndvm.cosearch(STREAM, TASK, inits=INITS, max_fits=20, threads=1)
    assert r["fits"][:20] == from_file["fits"]
    assert "malformed" in r["fits"][20]["error"]
    assert "does not parse" in r["fits"][21]["error"]
    assert r["summary"]["failed"] == from_file["summary"]["failed"] + 2


def test_a_budget_bounds_the_run():
    r = ndvm.cosearch(STREAM, TASK, inits=INITS, budget=0.3, threads=1)
    assert r["summary"]["fits"] > 0
    assert r["summary"]["seconds"] < 5
    assert np.all(np.diff(r["finished_at"]) >= -1e-3) or r["summary"]["fits"] == 1
