"""Bad source, bad inputs and failing programs raise Python exceptions, never crash."""

import numpy as np
import pytest

import ndvm

DECAY = "(* a (exp (- 0 (* b x))))"


def test_a_syntax_error_has_line_column_and_the_offending_line():
    with pytest.raises(ndvm.ProgramSyntaxError) as info:
        ndvm.Program("(+ 1\n   (foo 2))")
    e = info.value
    assert isinstance(e, SyntaxError) and isinstance(e, ndvm.Error)
    assert e.kind == "UnknownOperator"
    assert (e.lineno, e.offset, e.text) == (2, 5, "   (foo 2))")  # at `foo`
    assert (e.line, e.column) == (2, 5)
    assert "foo" in str(e)


@pytest.mark.parametrize(
    "source, kind",
    [
        ("", "EmptyProgram"),
        ("(+ 1 2", "Unclosed"),
        ("(+ 1 2))", "UnexpectedClose"),
        ("(+ 1 2]", "MismatchedClose"),
        ("(if)", "BadForm"),
        ("(recur 1)", "RecurOutsideLoop"),
        ("(sin 1 2)", "ArityMismatch"),
        ("(" * 20000 + ")" * 20000, "NestingTooDeep"),
    ],
)
def test_every_kind_of_bad_source_raises_a_syntax_error(source, kind):
    with pytest.raises(ndvm.ProgramSyntaxError) as info:
        ndvm.Program(source)
    assert info.value.kind == kind


def test_a_program_that_loops_forever_raises_after_its_step_budget():
    p = ndvm.Program("(loop ((i 0)) (recur (+ i 1)))", max_steps=100_000)
    assert p.max_steps == 100_000
    with pytest.raises(ndvm.LimitError) as info:
        p()
    assert info.value.kind == "StepBudget"
    assert isinstance(info.value, ndvm.EvaluationError)
    assert "max_steps" in str(info.value)
    # The default budget (50 million node visits) ends it too.
    with pytest.raises(ndvm.LimitError):
        ndvm.Program("(loop ((i 0)) (recur (+ i 1)))")()


def test_runaway_recursion_and_memory_raise_limit_errors():
    with pytest.raises(ndvm.LimitError) as info:
        ndvm.Program("(define (f n) (+ 1 (f n))) (f 1)", max_depth=500)()
    assert info.value.kind == "DepthLimit"
    with pytest.raises(ndvm.LimitError) as info:
        ndvm.Program("(* x (ones 1000))", max_memory_mb=1)(x=np.ones(1000))
    assert info.value.kind == "MemoryLimit"


@pytest.mark.parametrize(
    "bindings, words",
    [
        ({"a": 1.0, "b": 2.0}, "not bound"),
        ({"a": np.ones(2), "b": 1.0, "x": np.ones(3)}, "lanes"),
        ({"a": 1.0, "b": 1.0, "x": np.ones((2, 2))}, "ambiguous"),
        ({"a": 1.0, "b": 1.0, "x": "three"}, "numbers"),
        ({"a": True, "b": 1.0, "x": 1.0}, "boolean"),
        ({"a": 1.0, "b": 1.0, "x": ndvm.uniform(np.ones((2, 2, 2)))}, "dimensions"),
        ({"a": 1.0, "b": 1.0, "x": ndvm.lanes(1.0)}, "lane axis"),
        ({"a": 1.0, "b": 1.0, "x": np.array([])}, "no lanes"),
        ({"a": 1.0, "b": 1.0, "x": ndvm.lanes(np.ones((3, 2, 2, 2)))}, "dimensions"),
    ],
)
def test_bad_inputs_raise_binding_errors(bindings, words):
    with pytest.raises(ndvm.BindingError) as info:
        ndvm.Program(DECAY)(bindings)
    assert isinstance(info.value, ValueError)
    assert words in str(info.value)


def test_a_name_bound_twice_and_a_gradient_of_a_non_input_are_binding_errors():
    p = ndvm.Program(DECAY)
    with pytest.raises(ndvm.BindingError, match="twice"):
        p({"a": 1.0}, a=2.0, b=1.0, x=1.0)
    with pytest.raises(ndvm.BindingError, match="not an input"):
        p.value_and_grad(wrt=["zeta"], a=1.0, b=1.0, x=1.0)
    with pytest.raises(ValueError):
        p.value_and_grad(wrt=[1, 2], a=1.0, b=1.0, x=1.0)


def test_errors_while_running_name_their_lanes_and_place():
    p = ndvm.Program("(if (< x 0)\n    (car x)\n    x)")
    with pytest.raises(ndvm.EvaluationError) as info:
        p(x=np.array([1.0, -1.0, 2.0, -3.0]))
    e = info.value
    assert e.kind == "Type" and e.lanes == [1, 3]
    assert (e.line, e.column) == (2, 5)
    assert "(car x)" in str(e)
    # Without a lane axis there are no lanes to name.
    with pytest.raises(ndvm.EvaluationError) as info:
        p(x=-1.0)
    assert info.value.lanes is None


def test_lane_errors_nan_keeps_the_good_lanes():
    p = ndvm.Program("(if (< x 0) (car x) (* a x))", lane_errors="nan")
    value, g = p.value_and_grad(wrt=["a", "x"], a=2.0, x=np.array([1.0, -1.0, 3.0]))
    assert np.isnan(value[1]) and value[0] == 2.0 and value[2] == 6.0
    assert float(g["a"]) == 4.0  # summed over the lanes that succeeded
    assert np.isnan(g["x"][1]) and g["x"][2] == 2.0
    with pytest.raises(ndvm.EvaluationError):  # every lane failed
        p(a=1.0, x=np.array([-1.0, -2.0]))


def test_a_gradient_of_a_value_that_is_not_a_number_is_an_evaluation_error():
    with pytest.raises(ndvm.EvaluationError) as info:
        ndvm.Program("(vec a a)").value_and_grad(a=1.0)
    assert info.value.kind == "NotDifferentiable"


def test_bad_options():
    with pytest.raises(ValueError, match="precision"):
        ndvm.Program("1", precision="f16")
    with pytest.raises(ValueError, match="lane_errors"):
        ndvm.Program("1", lane_errors="ignore")
    with pytest.raises(ValueError, match="device"):
        ndvm.Program("1", device="tpu")
    # The GPU region path computes in f32.
    with pytest.raises(ValueError, match="precision f32"):
        ndvm.Program("1", device="gpu")
    with pytest.raises(TypeError):
        ndvm.Program(42)


def test_calibrate_and_cosearch_reject_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="not an input"):
        ndvm.calibrate(DECAY, params=["zeta"])
    with pytest.raises(ValueError, match="no parameters"):
        ndvm.calibrate("(+ 1 2)")
    with pytest.raises(ValueError, match="target needs data"):
        ndvm.calibrate(DECAY, target="y")
    with pytest.raises(ValueError, match="optimizer"):
        ndvm.calibrate(DECAY, optimizer="sgd", bind={"x": 1.0})
    with pytest.raises(ndvm.ProgramSyntaxError):
        ndvm.calibrate("(+ 1")
    with pytest.raises(FileNotFoundError):
        ndvm.calibrate(DECAY, data=tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="budget"):
        ndvm.cosearch([{"src": "x", "params": []}], tmp_path / "task.csv")
    with pytest.raises(FileNotFoundError):
        ndvm.cosearch([{"src": "x", "params": []}], tmp_path / "task.csv", max_fits=1)
