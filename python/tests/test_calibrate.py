"""ndvm.calibrate against `ndvm calibrate` (the same library code, so the same numbers)."""

import numpy as np
import pytest

import ndvm
from conftest import DATA, EXAMPLES, kalman_obs, kalman_source, run_cli

TASK = DATA / "cosearch" / "damped_oscillator.csv"
MODEL = "(* a (* (exp (* b x)) (sin (* c x))))"


def without_time(report):
    report = dict(report)
    assert report.pop("seconds") >= 0
    return report


def test_the_kalman_fit_of_the_readme_matches_the_command_line():
    py = ndvm.calibrate(
        kalman_source(),
        bind={"obs": kalman_obs()},
        params=["q", "r"],
        init={"q": 0.3, "r": 0.3},
        lr=0.08,
        steps=30,
        clamp={"q": (1e-4, None), "r": (1e-4, None)},
    )
    cli = run_cli(
        "calibrate", EXAMPLES / "kalman2d_T80.scm", "--bind", f"obs=@{EXAMPLES / 'kalman2d_obs.csv'}",
        "--params", "q,r", "--init", "q=0.3,r=0.3", "--lr", "0.08", "--steps", "30",
        "--clamp", "q=1e-4:", "--clamp", "r=1e-4:",
    )
    assert without_time(py) == without_time(cli)
    # The fit lowers the negative log-likelihood from its start and respects the clamp.
    start = float(ndvm.Program(kalman_source())(q=0.3, r=0.3, obs=ndvm.uniform(kalman_obs())))
    assert py["loss"] < start
    assert py["params"]["q"] >= 1e-4 and py["params"]["r"] >= 1e-4
    assert py["steps"] == 30 and py["evaluations"] == 31


def test_a_data_fit_with_held_out_rows_restarts_and_f32_matches_the_command_line(tmp_path):
    args = dict(data=TASK, target="y", params=["a", "b", "c"], init={"a": 0.5, "b": -0.1, "c": 1.5},
                steps=80, restarts=3, seed=7, precision="f32")
    py = ndvm.calibrate(MODEL, **args)
    model = tmp_path / "model.scm"
    model.write_text(MODEL)
    cli = run_cli(
        "calibrate", model, "--data", TASK, "--target", "y",
        "--params", "a,b,c", "--init", "a=0.5,b=-0.1,c=1.5", "--steps", "80", "--restarts", "3",
        "--seed", "7", "--precision", "f32",
    )
    assert without_time(py) == without_time(cli)
    assert len(py["restarts"]) == 3 and py["holdout_r2"] is not None and py["r2"] is not None


def test_columns_given_as_arrays_fit_like_the_csv_file():
    import csv

    rows = list(csv.DictReader(open(TASK)))
    data = {
        "x": np.array([float(r["x"]) for r in rows]),
        "y": np.array([float(r["y"]) for r in rows]),
        "split": [r["split"] for r in rows],
    }
    args = dict(target="y", params=["a", "b", "c"], init={"a": 0.5, "b": -0.1, "c": 1.5}, steps=40)
    from_file = without_time(ndvm.calibrate(MODEL, data=TASK, **args))
    from_arrays = without_time(ndvm.calibrate(MODEL, data=data, **args))
    assert from_file == from_arrays
    held = np.array(data["split"]) == "holdout"
    data["split"] = held  # booleans: True for held out
    assert without_time(ndvm.calibrate(MODEL, data=data, **args)) == from_file


def test_program_settings_lbfgs_and_default_parameters():
    # A Program's precision is the default; parameters default to the inputs not bound by data.
    p = ndvm.Program(MODEL, precision="f32")
    r = ndvm.calibrate(p, data=TASK, target="y", optimizer="lbfgs", steps=20)
    assert sorted(r["params"]) == ["a", "b", "c"]
    assert r["loss"] is not None and np.isfinite(r["loss"])
    # Minimising the program's own value: (x - 3)^2 + 1 has its minimum 1 at x = 3.
    r = ndvm.calibrate("(+ (* (- x 3) (- x 3)) 1)", init={"x": 0.0}, optimizer="lbfgs", steps=50)
    assert r["params"]["x"] == pytest.approx(3.0, abs=1e-6)
    assert r["loss"] == pytest.approx(1.0, abs=1e-10)


def test_restarts_over_any_number_of_threads_give_the_same_fit(tmp_path):
    def fit(threads):
        return without_time(ndvm.calibrate(
            MODEL, data=TASK, target="y", init={"a": 0.5, "b": -0.1, "c": 1.5}, steps=20,
            restarts=40, seed=3, threads=threads))

    one = fit(1)
    assert len(one["restarts"]) == 40
    assert fit(3) == one and fit(None) == one
    model = tmp_path / "model.scm"
    model.write_text(MODEL)
    cli = run_cli(
        "calibrate", model, "--data", TASK, "--target", "y", "--init", "a=0.5,b=-0.1,c=1.5",
        "--steps", "20", "--restarts", "40", "--seed", "3", "--threads", "2",
    )
    assert without_time(cli) == one


@pytest.mark.parametrize("bounds", [(1.0, 0.5), (float("nan"), None), (None, float("nan"))])
def test_crossed_or_nan_bounds_are_a_value_error(bounds):
    with pytest.raises(ValueError, match="clamp"):
        ndvm.calibrate(MODEL, data=TASK, target="y", params=["a", "b", "c"], clamp={"a": bounds})
