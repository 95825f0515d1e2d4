"""Rows for the random draws of branch ``data``: ``multinomial``, ``bernoulli``, ``poisson``
and the in-place fills. The values for a seed are NumPy's, so the rows compare dtype and
shape (``compare="shape"``) and the error classes; the distributions are checked against
their formulas in tests/data/test_data_random.py."""

from __future__ import annotations

from opinfo import F, I, S, row


def _c(x):
    return x * 1


row("dg.multinomial", lambda m, x, n, *a: m.multinomial(x, n, *a),
    [S(F(4, domain="positive"), 2), S(F(4, domain="positive"), 6, True), S(F(3, 5, domain="positive"), 5),
     S(F(2, 3, domain="positive"), 4, True), S(F(0, 3, domain="positive"), 2)],
    grad=False, compare="shape",
    errors=[S(F(4, domain="positive"), 5), S(F(4, domain="positive"), 0), S(F(domain="positive"), 1),
            S(F(2, 2, 2, domain="positive"), 1), S(I(3), 1)])
row("Tensor.multinomial", lambda m, x, n, *a: x.multinomial(n, *a),
    [S(F(4, domain="positive"), 3), S(F(2, 3, domain="positive"), 2, True)], grad=False,
    compare="shape", errors=[S(F(3, domain="positive"), 4)])
row("dg.bernoulli", lambda m, x, *a: m.bernoulli(x / 2, *a),
    [S(F(3, 4, domain="positive")), S(F(domain="positive")), S(F(0, domain="positive")),
     S(F(5, domain="positive"), 0.3)], grad=False, compare="shape")
row("Tensor.bernoulli", lambda m, x: (x / 2).bernoulli(), [S(F(3, domain="positive"))], grad=False,
    compare="shape")
row("dg.poisson", lambda m, x: m.poisson(x), [S(F(3, 4, domain="positive")), S(F(domain="positive"))],
    grad=False, compare="shape", errors=[S(I(3))])
row("Tensor.random_", lambda m, x, *a: _c(x).random_(*a),
    [S(F(3, 4)), S(F(5), 7), S(F(2, 3), -3, 3), S(I(4), 10), S(I(3), -2, 2)], grad=False,
    compare="shape", errors=[S(F(3), 5, 3), S(F(3), 2, 2)])
row("Tensor.exponential_", lambda m, x, *a: _c(x).exponential_(*a), [S(F(3, 4)), S(F(5), 2.5)],
    grad=False, compare="shape", errors=[S(F(3), 0.0), S(F(3), -1.0)])
row("Tensor.geometric_", lambda m, x, p: _c(x).geometric_(p), [S(F(3, 4), 0.3)], grad=False,
    compare="shape", errors=[S(F(3), 0.0), S(F(3), 1.5)])
row("Tensor.cauchy_", lambda m, x, *a: _c(x).cauchy_(*a), [S(F(3, 4)), S(F(2), 1.0, 3.0)],
    grad=False, compare="shape", errors=[S(F(3), 0.0, -1.0)])
row("Tensor.log_normal_", lambda m, x, *a: _c(x).log_normal_(*a), [S(F(3, 4)), S(F(2), 0.0, 0.5)],
    grad=False, compare="shape", errors=[S(F(3), 0.0, 0.0)])
row("Tensor.bernoulli_", lambda m, x, *a: _c(x).bernoulli_(*a), [S(F(3, 4)), S(F(2), 0.2)],
    grad=False, compare="shape", errors=[S(F(3), 1.5), S(F(3), -0.1)])
