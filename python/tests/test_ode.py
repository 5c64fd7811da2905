"""ODE discovery: ``ndvm.SymbolicODE`` (fit, predict, simulate, score) and ``ndvm search --time``
whose test R^2 an independent integration (scipy) of the printed ``infix`` reproduces."""

import numpy as np
import pytest

import ndvm
from conftest import run_cli


def logistic(x0, t, r=0.8, k=5.0):
    return k / (1 + (k / x0 - 1) * np.exp(-r * t))


def test_symbolic_ode_fits_simulates_and_scores():
    t = np.linspace(0, 8, 120)
    X = np.concatenate([logistic(0.3, t), logistic(7.0, t)])[:, None]
    T = np.concatenate([t, t])
    runs = np.array(["a"] * len(t) + ["b"] * len(t))
    model = ndvm.SymbolicODE(max_evals=2000, threads=2, autonomous=True, feature_names=["x"])
    model.fit(X, t=T, trajectory=runs)
    assert model.best_["train"]["r2"] > 0.999
    # `select="best"` (the default) chose it: within 1.5 times the lowest training loss.
    assert model.best_["selected"] and model.result_["selected"]["criterion"] == "best"
    lowest = min(m["train_loss"] for m in model.front_)
    assert model.best_["train_loss"] <= 1.5 * lowest
    # A trajectory it has not seen, integrated from its first row.
    held = logistic(1.5, t)[:, None]
    assert model.score(held, t=t) > 0.999
    sim = model.simulate([1.5], t)
    assert sim.shape == (len(t), 1)
    assert np.max(np.abs(sim[:, 0] - held[:, 0])) < 0.05
    # The derivatives at a few states: r x (1 - x / K).
    xs = np.array([[0.5], [2.0], [4.0]])
    assert np.allclose(model.predict(xs)[:, 0], 0.8 * xs[:, 0] * (1 - xs[:, 0] / 5), atol=0.02)
    assert len(model.equations_) == 1 and len(model.sympy()) == 1
    # The right-hand side in NumPy, constants bound: the same derivatives.
    (f,) = model.export("numpy")
    assert np.allclose(f(x=xs[:, 0]), model.predict(xs)[:, 0], rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="t"):
        model.fit(X, t=T[:-1])


def test_the_printed_infix_reproduces_the_test_r2_under_scipy(tmp_path):
    scipy_integrate = pytest.importorskip("scipy.integrate")

    def f(_t, x):
        return [x[1], -2.0 * x[0] - 0.3 * x[1]]

    def trajectory(x0, t):
        return scipy_integrate.solve_ivp(f, (t[0], t[-1]), x0, t_eval=t, rtol=1e-10, atol=1e-12).y.T

    t = np.linspace(0, 10, 150)
    rows = ["run,t,x,v"]
    for name, x0 in (("a", [1.0, 0.0]), ("b", [-0.5, 1.0])):
        for tk, xk in zip(t, trajectory(x0, t)):
            rows.append(f"{name},{float(tk)!r},{float(xk[0])!r},{float(xk[1])!r}")
    (tmp_path / "train.csv").write_text("\n".join(rows) + "\n")
    test_t = np.linspace(0, 10, 90)
    test = trajectory([0.2, -1.0], test_t)
    (tmp_path / "test.csv").write_text(
        "t,x,v\n" + "".join(f"{float(a)!r},{float(b)!r},{float(c)!r}\n" for a, (b, c) in zip(test_t, test)))
    out = run_cli("search", "--data", tmp_path / "train.csv", "--time", "t", "--target", "x,v",
                  "--trajectory", "run", "--autonomous", "--test", f"later={tmp_path / 'test.csv'}",
                  "--max-evals", "2000", "--seed", "3")
    front = out["front"]
    assert front
    checked = 0
    for m in front:
        reported = m["tests"]["later"]["r2"]
        if reported is None or reported < 0.9:
            continue
        code = [compile(m["equations"][s]["infix"], "<infix>", "eval") for s in ("x", "v")]
        env = {k: getattr(np, k) for k in ("sin", "cos", "exp", "log", "sqrt", "abs")}

        def rhs(_t, y):
            return [eval(c, {"__builtins__": {}}, {**env, "x": y[0], "v": y[1]}) for c in code]

        sim = scipy_integrate.solve_ivp(rhs, (test_t[0], test_t[-1]), test[0], t_eval=test_t,
                                        rtol=1e-10, atol=1e-12).y.T
        ssr = float(np.sum((sim - test) ** 2))
        sst = float(np.sum((test - test.mean(axis=0)) ** 2))
        assert abs((1 - ssr / sst) - reported) < 1e-4, (m["equations"], reported, 1 - ssr / sst)
        checked += 1
    assert checked > 0, front

