"""ndvm.torch: the runtime as a differentiable PyTorch op. Gradients against value_and_grad
and torch.autograd.gradcheck; Adam through the op reaching the parameters `ndvm.calibrate`
reaches with the same settings."""

import csv

import numpy as np
import pytest

import ndvm
from conftest import DATA, kalman_obs, kalman_source, require_torch

torch = require_torch()
import ndvm.torch as nt  # noqa: E402  (after the check that torch is there)

F64 = torch.float64
DECAY = "(* a (exp (- 0 (* b x))))"
TASK = DATA / "cosearch" / "damped_oscillator.csv"


def scalar(v, dtype=F64):
    return torch.tensor(v, dtype=dtype, requires_grad=True)


def test_backward_fills_the_grad_of_every_tensor_that_requires_it():
    op = nt.program_op(DECAY)
    a, b = scalar(2.0), scalar(0.5)
    x = torch.linspace(0, 2, 9, dtype=F64)
    out = op(a=a, b=b, x=x)
    assert out.shape == (9,) and out.dtype == F64 and out.requires_grad
    out.mean().backward()
    value, g = ndvm.Program(DECAY).value_and_grad(a=2.0, b=0.5, x=x.numpy(), wrt=["a", "b"])
    np.testing.assert_allclose(out.detach().numpy(), value, rtol=0, atol=0)
    assert a.grad.shape == () and x.grad is None
    np.testing.assert_allclose(a.grad.item(), g["a"] / 9, rtol=1e-14)
    np.testing.assert_allclose(b.grad.item(), g["b"] / 9, rtol=1e-14)


def test_lane_tensors_get_per_lane_gradients_weighted_by_the_output_gradient():
    op = nt.program_op(DECAY)
    a = torch.tensor([1.0, 2.0, 3.0], dtype=F64, requires_grad=True)
    x = torch.tensor([0.0, 1.0, 2.0], dtype=F64, requires_grad=True)
    w = torch.tensor([1.0, -2.0, 0.5], dtype=F64)
    (op(a=a, b=0.5, x=x) * w).sum().backward()
    _, g = ndvm.Program(DECAY).value_and_grad(a=a.detach().numpy(), b=0.5, x=x.detach().numpy())
    np.testing.assert_allclose(a.grad.numpy(), w.numpy() * g["a"], rtol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), w.numpy() * g["x"], rtol=1e-14)


@pytest.mark.parametrize(
    "source, make",
    [
        (DECAY, lambda: dict(a=scalar(1.3), b=scalar(0.4), x=torch.linspace(-1, 2, 6, dtype=F64).requires_grad_())),
        ("(if (< x 0) (* a x x) (sin (* a x)))", lambda: dict(a=scalar(0.7), x=torch.tensor([-1.5, 0.3, 2.0], dtype=F64, requires_grad=True))),
        ("(dot v (matvec M w))", lambda: dict(
            v=ndvm.uniform(torch.tensor([1.0, -0.5], dtype=F64, requires_grad=True)),
            M=ndvm.uniform(torch.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=F64, requires_grad=True)),
            w=ndvm.lanes(torch.tensor([[1.0, 0.0], [0.3, 0.7], [2.0, -1.0]], dtype=F64, requires_grad=True)))),
        ("(logdet (+ A (scale s (eye 2))))", lambda: dict(
            A=ndvm.lanes(torch.tensor([[[2.0, 0.3], [0.1, 1.5]], [[1.0, 0.0], [0.2, 3.0]]], dtype=F64, requires_grad=True)),
            s=scalar(0.25))),
    ],
)
def test_gradcheck_passes_in_float64(source, make):
    op = nt.program_op(source)
    inputs = make()
    names = list(inputs)
    wrapped = [type(v) if isinstance(v, (ndvm.Uniform, ndvm.Lanes)) else None for v in inputs.values()]
    tensors = [v.value if w else v for v, w in zip(inputs.values(), wrapped)]

    def f(*ts):
        return op({n: (w(t) if w else t) for n, w, t in zip(names, wrapped, ts)})

    assert torch.autograd.gradcheck(f, tuple(tensors), eps=1e-6, atol=1e-7, rtol=1e-6)


def test_gradcheck_on_the_kalman_likelihood():
    op = nt.program_op(kalman_source())
    obs = ndvm.uniform(kalman_obs())
    q = torch.tensor([0.05, 0.2], dtype=F64, requires_grad=True)
    r = scalar(0.1)
    assert torch.autograd.gradcheck(lambda q, r: op(q=q, r=r, obs=obs), (q, r), eps=1e-6, atol=1e-5, rtol=1e-5)


def train_rows():
    rows = [r for r in csv.DictReader(open(TASK)) if r["split"] == "train"]
    return np.array([float(r["x"]) for r in rows]), np.array([float(r["y"]) for r in rows])


def test_adam_through_the_op_reaches_the_parameters_of_ndvm_calibrate():
    # Candidate 0 of the damped-oscillator stream from its cycle-0 initial values, 50 Adam steps
    # at learning rate 0.05 on the training MSE: the co-search protocol.
    src = "(* a (* (exp (* b x)) (sin (* c x))))"
    init = {"a": 0.46229884, "b": -0.0880286694, "c": -0.653636813}
    x, y = train_rows()
    op = nt.program_op(src)
    params = {k: scalar(v) for k, v in init.items()}
    opt = torch.optim.Adam(params.values(), lr=0.05)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    for _ in range(50):
        opt.zero_grad()
        loss = ((op(x=xt, **params) - yt) ** 2).mean()
        loss.backward()
        opt.step()
    ours = ndvm.calibrate(src, data={"x": x, "y": y}, target="y", params=list(init), init=init,
                          steps=50, lr=0.05)
    for k in init:
        assert params[k].item() == pytest.approx(ours["params"][k], rel=1e-9, abs=1e-12)
    assert loss.item() == pytest.approx(ours["last_step_loss"], rel=1e-12)
    start = ((op(x=xt, **{k: torch.tensor(v) for k, v in init.items()}) - yt) ** 2).mean().item()
    assert ours["loss"] < 0.8 * start


def test_adam_fits_the_kalman_noise_through_the_op_like_the_readme_calibration():
    op = nt.program_op(kalman_source())
    obs = ndvm.uniform(kalman_obs())
    q, r = scalar(0.3), scalar(0.3)
    opt = torch.optim.Adam([q, r], lr=0.08)
    for _ in range(30):
        opt.zero_grad()
        op(q=q, r=r, obs=obs).backward()
        opt.step()
        with torch.no_grad():
            q.clamp_(min=1e-4)
            r.clamp_(min=1e-4)
    ours = ndvm.calibrate(kalman_source(), bind={"obs": kalman_obs()}, params=["q", "r"],
                          init={"q": 0.3, "r": 0.3}, lr=0.08, steps=30,
                          clamp={"q": (1e-4, None), "r": (1e-4, None)})
    assert q.item() == pytest.approx(ours["params"]["q"], rel=1e-9)
    assert r.item() == pytest.approx(ours["params"]["r"], rel=1e-9)


def test_float32_tensors_and_an_f32_program():
    op = nt.program_op(DECAY, precision="f32")
    a = scalar(2.0, torch.float32)
    out = op(a=a, b=torch.tensor(0.5), x=torch.linspace(0, 1, 4))
    assert out.dtype == torch.float32
    out.sum().backward()
    assert a.grad.dtype == torch.float32
    # float64 tensors into an f32 program come back as float64 tensors.
    assert op(a=scalar(2.0), b=0.5, x=1.0).dtype == F64


def test_no_grad_constants_and_errors():
    op = nt.program_op(DECAY)
    a = scalar(2.0)
    with torch.no_grad():
        out = op(a=a, b=0.5, x=np.array([0.0, 1.0]))
    assert not out.requires_grad and out.shape == (2,)
    assert op.inputs == ["a", "b", "x"] and "program_op" in repr(op)
    with pytest.raises(ndvm.BindingError):
        op(a=a, b=0.5)
    with pytest.raises(ndvm.EvaluationError):
        nt.program_op("(vec a a)")(a=a)
    with pytest.raises(TypeError, match="not numbers"):
        nt.program_op("(list a)")(a=torch.tensor(1.0))
    with pytest.raises(TypeError, match="twice"):
        op({"a": a}, a=a, b=0.5, x=1.0)
    # A program object keeps its own settings.
    assert nt.program_op(ndvm.Program(DECAY, precision="f32")).program.precision == "f32"
