"""ndvm.evaluate_population: many programs across worker threads, results in program order,
errors per program, and the same results for any thread count."""

import numpy as np
import pytest

import ndvm

SOURCES = [
    "(* a (exp (- 0 (* b x))))",
    "(+ (* a x) b)",
    "(+ 1",  # does not parse
    "(* a (sin (* c x)))",  # `c` is not bound
    "(if (< x 1) (car x) x)",  # fails on some lanes
    "(loop ((i 0)) (recur (+ i 1)))",  # runs forever: the step budget ends it
    "(* b b x)",
]


@pytest.fixture
def bindings():
    return {"a": 2.0, "b": 0.5, "x": np.linspace(0, 2, 9)}


def test_results_come_back_in_order_with_errors_per_program(bindings):
    programs = [ndvm.Program(s, max_steps=100_000) if "loop" in s else s for s in SOURCES]
    out = ndvm.evaluate_population(programs, bindings, threads=2)
    assert len(out) == len(SOURCES)
    assert all(isinstance(r, ndvm.Evaluation) for r in out)
    for i in (0, 1, 6):
        expected = ndvm.Program(SOURCES[i])(bindings)
        np.testing.assert_array_equal(out[i].value, expected)
        assert out[i].error is None and out[i].grads is None
    assert isinstance(out[2].error, ndvm.ProgramSyntaxError) and out[2].value is None
    assert isinstance(out[3].error, ndvm.BindingError) and "`c`" in str(out[3].error)
    assert isinstance(out[4].error, ndvm.EvaluationError) and out[4].error.lanes == [0, 1, 2, 3]
    assert isinstance(out[5].error, ndvm.LimitError)
    # The errors are the ones a direct call raises.
    with pytest.raises(ndvm.EvaluationError) as info:
        ndvm.Program(SOURCES[4])(bindings)
    assert str(info.value) == str(out[4].error)


def test_any_thread_count_gives_the_same_results(bindings):
    rng = np.random.default_rng(1)
    programs = [f"(+ (* {rng.uniform():.6f} a x) (sin (* b x {k})))" for k in range(60)]
    one = ndvm.evaluate_population(programs, bindings, threads=1, wrt=["a", "b"])
    two = ndvm.evaluate_population(programs, bindings, threads=2)
    many = ndvm.evaluate_population(programs, bindings, wrt=["a", "b"])
    for r1, r2, r3 in zip(one, two, many):
        np.testing.assert_array_equal(r1.value, r2.value)
        np.testing.assert_array_equal(r1.value, r3.value)
        assert r2.grads is None
        for name in ("a", "b"):
            np.testing.assert_array_equal(r1.grads[name], r3.grads[name])


def test_gradients_match_value_and_grad_and_skip_inputs_a_program_lacks(bindings):
    out = ndvm.evaluate_population(SOURCES[:2] + ["(* 3 x)"], bindings, wrt=["a", "b"])
    for src, r in zip(SOURCES[:2], out):
        value, grads = ndvm.Program(src).value_and_grad(bindings, wrt=["a", "b"])
        np.testing.assert_array_equal(r.value, value)
        assert set(r.grads) == {"a", "b"}
        for k in grads:
            np.testing.assert_array_equal(r.grads[k], grads[k])
    assert out[2].grads == {}


def test_one_mapping_per_program_and_program_settings_are_kept():
    programs = [ndvm.Program("(* a 0.1)", precision="f32"), "(* a 0.1)"]
    out = ndvm.evaluate_population(programs, [{"a": 3.0}, {"a": np.array([1.0, 2.0])}])
    assert out[0].value.dtype == np.float32 and out[0].value.shape == ()
    assert out[1].value.shape == (2,)
    with pytest.raises(ValueError, match="one mapping"):
        ndvm.evaluate_population(programs, [{"a": 1.0}])
    with pytest.raises(ValueError):
        ndvm.evaluate_population([3.5], {"a": 1.0})
    with pytest.raises(ndvm.BindingError):
        ndvm.evaluate_population(programs, {"a": np.ones((2, 2))})
