"""Rows for the core elementwise operations and reductions that predate the table."""

from __future__ import annotations

from conformance import F, S, row

UNARY = [F(3, 4), F(), F(0, 3), F(2, 1, 3)]

for _name in ("exp", "tanh", "sigmoid", "sin", "cos", "abs"):
    row(f"Tensor.{_name}", lambda m, x, n=_name: getattr(x, n)(), UNARY)
    row(f"dg.{_name}", lambda m, x, n=_name: getattr(m, n)(x), UNARY[:2])
for _name in ("log", "sqrt"):
    row(f"Tensor.{_name}", lambda m, x, n=_name: getattr(x, n)(),
        [F(3, 4, domain="positive"), F(domain="positive"), F(0, domain="positive")])
    row(f"dg.{_name}", lambda m, x, n=_name: getattr(m, n)(x), [F(5, domain="positive")])
row("Tensor.relu", lambda m, x: x.relu(), [F(3, 4, domain="distinct"), F(domain="distinct")])
row("dg.relu", lambda m, x: m.relu(x), [F(3, 4, domain="distinct")])

row("Tensor.__add__", lambda m, x, y: x + y, [S(F(3, 4), F(4)), S(F(3, 1), F(4)), S(F(), F(2)),
                                              S(F(3), 2.5), S(F(0, 3), F(3))],
    errors=[S(F(3), "a")])
row("Tensor.__mul__", lambda m, x, y: x * y, [S(F(3, 4), F(4)), S(F(2), 3.0)])
row("Tensor.__neg__", lambda m, x: -x, UNARY)
row("Tensor.sum", lambda m, x, **kw: x.sum(**kw),
    [S(F(3, 4)), S(F(3, 4), dim=0), S(F(3, 4), dim=-1, keepdim=True), S(F(2, 3, 4), dim=(0, 2)),
     S(F(0, 3), dim=0), S(F())])
row("Tensor.mean", lambda m, x, **kw: x.mean(**kw),
    [S(F(3, 4)), S(F(3, 4), dim=1), S(F(2, 3, 4), dim=(0, 2), keepdim=True)])
row("Tensor.__matmul__", lambda m, x, y: x @ y,
    [S(F(3, 4), F(4, 2)), S(F(4), F(4, 2)), S(F(3, 4), F(4)), S(F(2, 3, 4), F(4, 5)), S(F(4), F(4))])
