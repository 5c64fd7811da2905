"""`ndvm.export` and `ndvm export`: programs as NumPy, PyTorch, JAX and sympy code, their values
and gradients against the runtime's, and the forms no target can express refused by name."""

import os
import subprocess

import numpy as np
import pytest

import ndvm
from conftest import CLAMPED, EXAMPLES, REPO, close, kalman_obs, kalman_source, ndvm_binary, \
    require_torch, suite

TOL = 1e-9


def need(module):
    """A package CI installs (there a missing one fails the test instead of skipping it)."""
    if os.environ.get("CI"):
        return __import__(module)
    return pytest.importorskip(module)


def bindings_of(p):
    b = dict(p["scalars"])
    m = p.get("matrix")
    if m:
        b[m["name"]] = np.array(m["data"], dtype=float).reshape(m["rows"], m["cols"])
    return b


def runtime(prog, p):
    """The runtime's value and gradients (float64) on the program's bindings."""
    b = {k: ndvm.uniform(v) if isinstance(v, np.ndarray) else v for k, v in bindings_of(p).items()}
    wrt = [k for k in p["grads"] if k in prog.inputs]
    value, grads = prog.value_and_grad(b, wrt=wrt)
    return float(value), {k: np.asarray(g, dtype=float) for k, g in grads.items()}


def exportable():
    """The conformance programs, each with its export to NumPy or the error saying why not."""
    out = []
    for p in suite():
        prog = ndvm.Program(p["src"], protected_ops=p["name"] in CLAMPED)
        try:
            out.append((p, prog, prog.to_numpy(), None))
        except ndvm.ExportError as e:
            out.append((p, prog, None, e))
    return out


def test_the_conformance_suite_exports_to_numpy_with_its_values():
    done = refused = 0
    for p, prog, f, err in exportable():
        if err is not None:
            # What cannot be exported says which form and where.
            assert err.line is not None and err.form, (p["name"], str(err))
            refused += 1
            continue
        value = f(**bindings_of(p))
        want, _ = runtime(prog, p)
        assert close(float(value), want, TOL), (p["name"], value, want)
        assert f.inputs == prog.inputs
        assert "def program(" in f.source
        done += 1
    # Lists, letrec recursion and recursive defines are the suite's only unexportable forms.
    assert refused <= 3 and done >= 31, (done, refused)


def test_torch_exports_give_the_runtime_s_gradients():
    torch = require_torch()
    checked = 0
    for p, prog, _, err in exportable():
        if err is not None:
            continue
        f = prog.to_torch()
        b = bindings_of(p)
        leaves = {k: torch.tensor(v, dtype=torch.float64, requires_grad=k in p["grads"])
                  for k, v in b.items()}
        value = f(**leaves)
        want_value, want_grads = runtime(prog, p)
        assert close(float(value.detach()), want_value, TOL), p["name"]
        wrt = list(want_grads)
        if not wrt:
            continue
        grads = torch.autograd.grad(value, [leaves[k] for k in wrt], allow_unused=True)
        for k, g in zip(wrt, grads):
            want = want_grads[k]
            got = np.zeros_like(want) if g is None else g.detach().numpy()
            assert np.allclose(got, want, rtol=1e-7, atol=1e-9, equal_nan=True), \
                (p["name"], k, got, want)
        checked += 1
    # The other five conformance programs have no inputs.
    assert checked >= 26


def test_the_kalman_filter_exports_and_its_gradient_agrees():
    torch = require_torch()
    prog = ndvm.Program(kalman_source())
    obs = kalman_obs()
    value, grads = prog.value_and_grad(wrt=["q", "r"], q=0.05, r=0.1, obs=ndvm.uniform(obs))
    f = prog.to_numpy()
    assert abs(f(q=0.05, r=0.1, obs=obs) - float(value)) <= 1e-9 * abs(float(value))
    q = torch.tensor(0.05, dtype=torch.float64, requires_grad=True)
    r = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)
    nll = prog.to_torch()(q=q, r=r, obs=torch.tensor(obs))
    gq, gr = torch.autograd.grad(nll, [q, r])
    assert abs(gq.item() - float(grads["q"])) <= 1e-8 * abs(float(grads["q"]))
    assert abs(gr.item() - float(grads["r"])) <= 1e-8 * abs(float(grads["r"]))


def test_jax_exports_jit_and_differentiate_when_jax_is_installed():
    jax = need("jax")
    jax.config.update("jax_enable_x64", True)
    prog = ndvm.Program(kalman_source())
    obs = kalman_obs()
    value, grads = prog.value_and_grad(wrt=["q", "r"], q=0.05, r=0.1, obs=ndvm.uniform(obs))
    f = prog.to_jax()
    assert "fori_loop(0, 80" in f.source
    g = jax.jit(jax.grad(lambda q, r: f(q=q, r=r, obs=obs), argnums=(0, 1)))(0.05, 0.1)
    assert abs(float(g[0]) - float(grads["q"])) <= 1e-8 * abs(float(grads["q"]))
    # A loop whose end depends on the data is a while_loop, batched by vmap.
    walk = ndvm.Program("(loop ((s x) (n 0)) (if (> s 1) (recur (/ s 2) (+ n 1)) n))")
    fw = walk.to_jax()
    assert "while_loop" in fw.source
    xs = np.array([0.5, 3.0, 17.0])
    want = walk(x=ndvm.lanes(xs))
    assert np.array_equal(np.asarray(jax.vmap(lambda x: fw(x=x))(xs)), want)


def test_loops_over_lanes_run_each_lane_to_its_own_end():
    walk = ndvm.Program("(loop ((s x) (n 0)) (if (> s 1) (recur (/ s 2) (+ n 1)) (+ n s)))")
    xs = np.array([0.5, 3.0, 17.0, 1000.0])
    assert np.array_equal(walk.to_numpy()(x=xs), walk(x=ndvm.lanes(xs)))


def test_sympy_and_latex_of_a_formula():
    sympy = need("sympy")
    prog = ndvm.Program("(let ((d (- x c))) (+ (* a (exp (- 0 (* b d)))) (sin d)))")
    e = prog.to_sympy()
    a, b, c, x = sympy.symbols("a b c x")
    want = a * sympy.exp(-b * (x - c)) + sympy.sin(x - c)
    assert sympy.simplify(e - want) == 0
    tex = prog.to_latex()
    assert "e^{" in tex and "\\sin" in tex


def test_a_front_member_exports_with_its_constants():
    i = np.arange(60)
    X = np.column_stack([np.linspace(-2, 2, 60), 0.1 + (i % 7) / 3.0])
    y = 2.5 * X[:, 0] * np.sin(X[:, 1]) + 0.5
    r = ndvm.search(X, y, names=["x", "v"], max_evals=800, islands=2, population=30, seed=1)
    for m in r["front"]:
        f = ndvm.export.to_numpy(m)
        assert set(f.inputs) <= {"x", "v"}
        p = ndvm.Program(m["src"])
        b = dict(m["params"])
        for j, n in enumerate(["x", "v"]):
            if n in p.inputs:
                b[n] = ndvm.lanes(X[:, j])
        want = np.broadcast_to(np.asarray(p(b), dtype=float), y.shape)
        got = np.broadcast_to(np.asarray(f(**{n: X[:, j] for j, n in enumerate(["x", "v"])
                                               if n in f.inputs}), dtype=float), y.shape)
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12), m["infix"]


def test_what_cannot_be_exported_is_an_error_naming_the_form():
    cases = {
        "(define (f n)\n  (if (= n 0) 1 (* n (f (- n 1)))))\n(f x)": "recursion",
        "(eq? x 'a)": "eq",
        "(if (> x 0) x)": "else",
    }
    for src, word in cases.items():
        with pytest.raises(ndvm.ExportError, match=word) as e:
            ndvm.Program(src).to_numpy()
        assert e.value.line is not None
    with pytest.raises(TypeError, match="missing"):
        ndvm.Program("(+ a b)").to_numpy()(a=1.0)


def test_ndvm_export_prints_runnable_code_or_a_clear_error(tmp_path):
    binary = ndvm_binary()
    for path in sorted(EXAMPLES.glob("*.scm")):
        out = subprocess.run([binary, "export", str(path), "--to", "jax"], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, (path, out.stderr)
        compile(out.stdout, str(path), "exec")
    programs = sorted((REPO / "tests" / "programs" / "ok").glob("*.scm"))
    printed = refused = 0
    for path in programs:
        out = subprocess.run([binary, "export", str(path), "--to", "numpy"], capture_output=True,
                             text=True, timeout=60)
        if out.returncode == 0:
            compile(out.stdout, str(path), "exec")
            printed += 1
        else:
            assert out.returncode == 1, (path, out.stderr)
            assert "cannot export" in out.stderr and "line " in out.stderr, (path, out.stderr)
            refused += 1
    # The test programs return lists to print several results; the examples all export.
    assert printed >= 60, (printed, refused)
    tex = subprocess.run([binary, "export", "-", "--to", "latex"], input="(* a (exp x))",
                         capture_output=True, text=True, timeout=60)
    assert tex.returncode == 0 and "e^{x}" in tex.stdout, tex.stderr


def test_the_fuzz_corpus_exports_with_the_runtime_s_values_and_gradients():
    import json

    torch = require_torch()
    corpus = [json.loads(x) for x in open(REPO / "data" / "fuzz" / "seed1234_corpus.jsonl")]
    checked = refused = 0
    for case in corpus:
        prog = ndvm.Program(case["src"])
        params = dict(case["params"])
        try:
            fn, ft = prog.to_numpy(), prog.to_torch()
        except ndvm.ExportError as e:
            assert e.line is not None, case["src"]
            refused += 1
            continue
        wrt = [k for k in prog.inputs if k in params]
        value, grads = prog.value_and_grad(params, wrt=wrt)
        assert close(float(fn(**params)), float(value), TOL), case["id"]
        leaves = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
                  for k, v in params.items() if k in prog.inputs}
        out = ft(**leaves)
        assert close(float(out.detach()), float(value), TOL), case["id"]
        if wrt:
            gs = torch.autograd.grad(out, [leaves[k] for k in wrt], allow_unused=True)
            for k, g in zip(wrt, gs):
                got = 0.0 if g is None else float(g)
                assert close(got, float(grads[k]), 1e-8), (case["id"], k, got, grads[k])
        checked += 1
    assert checked >= 180, (checked, refused)


def test_a_missing_package_is_named(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "jax", None)
    with pytest.raises(ImportError, match="needs jax"):
        ndvm.Program("(+ a 1)").to_jax()


def test_the_estimator_exports_its_members():
    need("sklearn")
    i = np.arange(80)
    X = np.column_stack([np.linspace(-2, 2, 80), 0.1 + (i % 7) / 3.0])
    y = 2.5 * X[:, 0] * np.sin(X[:, 1]) + 0.5
    model = ndvm.SymbolicRegressor(max_evals=800, islands=2, population=30).fit(X, y)
    f = model.numpy()
    got = np.broadcast_to(f(**{n: X[:, j] for j, n in enumerate(["x0", "x1"]) if n in f.inputs}),
                          y.shape)
    assert np.allclose(got, model.predict(X), rtol=1e-12, atol=1e-12)
    torch = require_torch()
    ft = model.pytorch()
    out = ft(**{n: torch.tensor(X[:, j]) for j, n in enumerate(["x0", "x1"]) if n in ft.inputs})
    assert np.allclose(np.broadcast_to(out.numpy(), y.shape), model.predict(X), rtol=1e-12)


def test_lists_are_tuples_where_the_target_holds_them():
    torch = require_torch()
    prog = ndvm.Program("(let ((p (cons (* a x) (list (+ a 1) 2.0)))) "
                        "(list (car p) (car (cdr p)) (null? (cdr (cdr (cdr p))))))")
    assert str(prog(a=2.0, x=3.0)) == "(6 3 #t)"  # the runtime prints a list's value
    got = prog.to_numpy()(a=2.0, x=3.0)
    assert isinstance(got, tuple) and len(got) == 3
    assert [float(g) for g in got[:2]] == [6.0, 3.0] and bool(got[2])
    a = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    first = prog.to_torch()(a=a, x=torch.tensor(3.0, dtype=torch.float64))[0]
    (g,) = torch.autograd.grad(first, [a])
    assert float(g) == 3.0
    with pytest.raises(ndvm.ExportError, match="sympy"):
        prog.to_sympy()


def test_jax_exports_give_the_runtime_s_values_and_gradients_on_the_suite():
    jax = need("jax")
    jax.config.update("jax_enable_x64", True)
    checked = 0
    for p, prog, _, err in exportable():
        if err is not None:
            continue
        f = prog.to_jax()
        b = bindings_of(p)
        want_value, want_grads = runtime(prog, p)
        wrt = list(want_grads)
        rest = {k: v for k, v in b.items() if k not in wrt}

        def value(*xs, f=f, wrt=wrt, rest=rest):
            return f(**dict(zip(wrt, xs)), **rest)

        xs = [b[k] for k in wrt]
        assert close(float(value(*xs)), want_value, TOL), p["name"]
        if wrt:
            gs = jax.jit(jax.grad(value, argnums=tuple(range(len(wrt)))))(*xs)
            for k, g in zip(wrt, gs):
                assert np.allclose(np.asarray(g), want_grads[k], rtol=1e-7, atol=1e-9,
                                   equal_nan=True), (p["name"], k)
        checked += 1
    assert checked >= 31


def test_only_false_is_false_as_in_the_runtime():
    prog = ndvm.Program("(if x 1.0 2.0)")
    for target in ("to_numpy", "to_torch"):
        assert float(getattr(prog, target)()(x=0.0)) == float(prog(x=0.0)) == 1.0
    both = ndvm.Program("(if (and (> x 0) (< x 1)) 1.0 2.0)")
    xs = np.array([-0.5, 0.5, 1.5])
    assert np.array_equal(both.to_numpy()(x=xs), both(x=ndvm.lanes(xs)))
    with pytest.raises(ndvm.ExportError, match="not a test"):
        ndvm.Program("(or a b)").to_numpy()


def test_the_reviewed_edge_cases_agree_or_are_refused():
    torch = require_torch()
    same = [
        ("(if (not x) 1 2)", {"x": 0.0}),
        ("(not x)", {"x": 0.0}),
        ("(loop ((i 0) (s 0)) (if (= i 5) s (let ((t (* i i))) (if (> t 5) (recur (+ i 1) "
         "(+ s 1)) (recur (+ i 1) (+ s t))))))", {}),
        ("(if (and (< i 3) (> (ref [1 2 3] i) 0)) 1 2)", {"i": 3.0}),
        ("(let ((range 5)) (loop ((i 0)) (if (< i range) (recur (+ i 1)) i)))", {}),
    ]
    for src, b in same:
        prog = ndvm.Program(src)
        want = float(np.asarray(prog(**b), dtype=float))
        for target in ("to_numpy", "to_torch"):
            got = getattr(prog, target)()(**b)
            got = float(got.detach()) if isinstance(got, torch.Tensor) else float(got)
            assert got == want, (src, target, got, want)
    lanes = ndvm.Program("(if (if (> x 0) #t (< x -1)) 10 20)")
    xs = np.array([1.0, -0.5, -2.0])
    want = lanes(x=ndvm.lanes(xs))
    assert np.array_equal(lanes.to_numpy()(x=xs), want)
    assert np.array_equal(lanes.to_torch()(x=torch.tensor(xs)).numpy(), want)
    refused = [
        "(let ((f (lambda (y) (* 2 y)))) (define (g y) (f y)) (define (f y) (* 3 y)) (g 1))",
        "(let ((b 1)) (define (g) b) (define b 2) (g))",
        "(define (f y) (sin y)) (define (sin y) 0) (f 1)",
        "(let ((g (lambda () 5))) (letrec ((f (lambda () (g))) (g (lambda () 1))) (f)))",
    ]
    for src in refused:
        with pytest.raises(ndvm.ExportError, match="before its definition"):
            ndvm.Program(src).to_numpy()


def test_an_index_out_of_range_raises_as_in_the_runtime():
    prog = ndvm.Program("(ref [1 2 3] i)")
    assert float(prog.to_numpy()(i=2.0)) == 3.0
    for bad in (-1.0, 3.0, 1.5):
        with pytest.raises(ndvm.Error):
            prog(i=bad)
        with pytest.raises(IndexError):
            prog.to_numpy()(i=bad)
        with pytest.raises(IndexError):
            prog.to_torch()(i=bad)
