"""The scalar engines against PyTorch in float64: values, gradients, tangents, Hessians.

Every test is marked ``oracle`` and takes the ``torch`` fixture from conftest.py, so
the file skips cleanly (with the install hint) when PyTorch is absent.
"""

from __future__ import annotations

import pytest

from duograd.scalar import Value
from duograd.scalar.forward import Dual
from duograd.scalar.higher import Var, grad
from duograd.scalar.nn import MLP

# Written once, run on Values, Duals, Vars and torch tensors alike.
EXPRESSIONS = {
    "seed x*y + x": lambda x, y: x * y + x,
    "tanh of products": lambda x, y: (x * y).tanh() * (x - y * 0.5).tanh(),
    "chain of divisions": lambda x, y: x / y / (x + 2.0) / (y * y + 1.0) / 0.3,
    "negative and fractional powers": lambda x, y: x**-1.5 * y**0.5 + (x * y) ** -0.3 - y**2.5,
    "log of sin and exp": lambda x, y: (x.sin() ** 2 + y.exp()).log() * x.cos(),
    "sigmoid and relu": lambda x, y: (x * 2.0 - y).sigmoid() * (x + y).relu() - (-x).relu(),
    "reflected numbers": lambda x, y: 2.0 / x + 3.0 - y - 1.5 * y + (1 - x) * (4 / (y + 1)),
    "shared subexpression": lambda x, y: (lambda t: t * t + t.exp() / t)(x * y + 1.0),
}
POINTS = [(0.7, 1.3), (1.9, 0.4)]
CASES = [(name, p) for name in EXPRESSIONS for p in POINTS]
IDS = [f"{name}@{p}" for name, p in CASES]


def close(a, b, tol=1e-12):
    return abs(a - b) <= tol * max(1.0, abs(b))


def torch_value_and_grad(torch, fn, point):
    xs = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in point]
    out = fn(*xs)
    out.backward()
    return out.item(), [x.grad.item() for x in xs]


@pytest.mark.oracle
@pytest.mark.parametrize("name, point", CASES, ids=IDS)
def test_value_matches_torch(torch, name, point):
    fn = EXPRESSIONS[name]
    leaves = [Value(p) for p in point]
    out = fn(*leaves)
    out.backward()
    want, want_grads = torch_value_and_grad(torch, fn, point)
    assert close(out.data, want)
    assert all(close(leaf.grad, g) for leaf, g in zip(leaves, want_grads)), ([v.grad for v in leaves], want_grads)


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.func's own internals warn
@pytest.mark.parametrize("name, point", CASES, ids=IDS)
def test_dual_matches_torch_jvp(torch, name, point):
    fn = EXPRESSIONS[name]
    tangent = (0.6, -1.7)  # any direction: the tangent is the directional derivative
    out = fn(*[Dual(p, t) for p, t in zip(point, tangent)])
    as_tensors = lambda ps: tuple(torch.tensor(p, dtype=torch.float64) for p in ps)
    want, want_tangent = torch.func.jvp(fn, as_tensors(point), as_tensors(tangent))
    assert close(out.value, want.item())
    assert close(out.tangent, want_tangent.item())


@pytest.mark.oracle
@pytest.mark.parametrize("name", [n for n in EXPRESSIONS if n != "sigmoid and relu"])
def test_var_hessian_matches_torch(torch, name):
    fn = EXPRESSIONS[name]
    point = POINTS[0]
    xs = [Var(p) for p in point]
    first = grad(fn(*xs), xs)
    hessian = [[d.data for d in grad(g, xs)] for g in first]

    ts = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in point]
    t_first = torch.autograd.grad(fn(*ts), ts, create_graph=True)
    # torch answers None for an input the derivative does not depend on; ours is Var(0.0).
    t_hessian = [[0.0 if h is None else h.item() for h in torch.autograd.grad(g, ts, retain_graph=True, allow_unused=True)]
                 for g in t_first]

    assert all(close(a.data, b.item()) for a, b in zip(first, t_first))
    for row, t_row in zip(hessian, t_hessian):
        assert all(close(a, b, 1e-11) for a, b in zip(row, t_row)), (hessian, t_hessian)


@pytest.mark.oracle
def test_mlp_337_gradients_match_torch(torch):
    model = MLP(2, [16, 16, 1], rng=0)
    x = [0.3, -0.8]
    out = model(x)
    out.backward()

    # The same network in torch, weights copied across: one (weights, bias) pair per neuron.
    t_params = [[(torch.tensor([w.data for w in n.w], dtype=torch.float64, requires_grad=True),
                  torch.tensor(n.b.data, dtype=torch.float64, requires_grad=True))
                 for n in layer.neurons] for layer in model.layers]
    h = torch.tensor(x, dtype=torch.float64)
    for i, layer in enumerate(t_params):
        h = torch.stack([w @ h + b for w, b in layer])
        if i < len(t_params) - 1:
            h = h.relu()
    h.sum().backward()

    t_grads = [g for layer in t_params for w, b in layer for g in [*w.grad.tolist(), b.grad.item()]]
    assert close(out.data, h.item())
    assert len(t_grads) == len(model.parameters()) == 337
    assert all(close(p.grad, g) for p, g in zip(model.parameters(), t_grads))
