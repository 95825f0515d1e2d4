"""The spiral's Bayes ceiling (experiments/bayes.py) against brute force.

References independent of the code under test:
- the generator itself (experiments.make_spiral): large samples, whose label frequencies
  near a point estimate the posterior, and on which a histogram classifier (no density
  formula at all) is trained and scored;
- the closed form and the quadrature, which share no code beyond the wrapped normal;
- the numbers a hand calculation gives (the issue's table).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from experiments import bayes, make_spiral, spiral


@pytest.mark.parametrize("revolutions", [1.0, 2.5, 4.0])
@pytest.mark.parametrize("noise", [0.2, 0.5, 0.955, 1.5, 3.0])
def test_quadrature_equals_closed_form(revolutions, noise):
    assert bayes.bayes_accuracy(revolutions, noise) == pytest.approx(
        bayes.bayes_accuracy_closed_form(noise), abs=1e-7)


def test_hand_calculation_table():
    # P(|N(0, s^2)| < pi/2) plus the wrapped terms, worked out by hand (the table).
    for noise, acc in ((0.5, 0.998), (0.7, 0.975), (0.9, 0.919), (1.0, 0.884), (1.2, 0.809)):
        assert bayes.bayes_accuracy(2.5, noise) == pytest.approx(acc, abs=6e-4)
    # Without wrapping it is erf(pi / (2 sqrt(2) s)); wrapping matters only for large noise.
    assert bayes.bayes_accuracy_closed_form(0.5) == pytest.approx(
        math.erf(math.pi / (2 * math.sqrt(2) * 0.5)), abs=1e-12)


def test_limits_and_monotone():
    assert bayes.bayes_accuracy(2.5, 0.05) == pytest.approx(1.0, abs=1e-12)
    assert bayes.bayes_accuracy(2.5, 20.0) == pytest.approx(0.5, abs=1e-6)
    accs = [bayes.bayes_accuracy_closed_form(s) for s in np.linspace(0.1, 3.0, 30)]
    assert all(a > b for a, b in zip(accs, accs[1:]))


def test_wrapped_normal_is_a_density_on_the_circle():
    d = np.linspace(-np.pi, np.pi, 20_001)[:-1]
    for sigma in (0.3, 1.0, 2.5):
        assert wrapped_integral(d, sigma) == pytest.approx(1.0, abs=1e-10)
    with pytest.raises(ValueError, match="sigma must be positive"):
        bayes.wrapped_normal(0.0, 0.0)


def wrapped_integral(d, sigma):
    return float(bayes.wrapped_normal(d, sigma).sum() * (2 * np.pi / len(d)))


@pytest.mark.parametrize("noise", [0.5, 0.955, 1.5])
def test_bayes_rule_on_a_large_sample_scores_the_ceiling(noise):
    """Monte Carlo: the rule P(1 | x) > 1/2 scored on 400,000 fresh points from the generator."""
    X, y = make_spiral(400_000, 2.5, noise, rng=123)
    acc = float(np.mean((bayes.posterior(X, 2.5, noise) > 0.5) == y))
    ceiling = bayes.bayes_accuracy(2.5, noise)
    se = math.sqrt(ceiling * (1 - ceiling) / len(y))
    assert abs(acc - ceiling) < 4 * se + 1e-9


def test_posterior_matches_label_frequencies_near_points():
    """Brute force: among generated points close to x, the fraction of class 1."""
    noise = 0.955
    X, y = make_spiral(2_000_000, 2.5, noise, rng=7)
    queries = np.array([[0.3, 0.1], [-0.5, 0.4], [0.1, -0.7], [0.6, 0.6], [-0.2, -0.2]])
    for q in queries:
        near = np.hypot(*(X - q).T) < 0.02
        n = int(near.sum())
        assert n > 400
        freq = float(y[near].mean())
        p = float(bayes.posterior(q[None, :], 2.5, noise)[0])
        se = math.sqrt(max(p * (1 - p), 0.01) / n)
        # The disc averages the posterior over its area: a little slack beyond sampling error.
        assert abs(freq - p) < 4 * se + 0.03, (q, freq, p, n)


def test_a_histogram_classifier_gets_close_to_the_ceiling_but_not_above():
    """No density formula: polar-bin label counts from one sample, scored on another."""
    noise, rev = 0.955, 2.5
    ceiling = bayes.bayes_accuracy(rev, noise)

    def polar_bins(X):
        r = np.hypot(X[:, 0], X[:, 1])
        theta = np.arctan2(X[:, 1], X[:, 0]) % (2 * np.pi)
        return np.minimum((r * 60).astype(int), 59) * 240 + (theta / (2 * np.pi) * 240).astype(int)

    Xa, ya = make_spiral(2_000_000, rev, noise, rng=1)
    Xb, yb = make_spiral(400_000, rev, noise, rng=2)
    ones = np.bincount(polar_bins(Xa), weights=ya, minlength=60 * 240)
    total = np.bincount(polar_bins(Xa), minlength=60 * 240)
    vote = ones > total / 2
    acc = float(np.mean(vote[polar_bins(Xb)] == yb))
    se = math.sqrt(ceiling * (1 - ceiling) / len(yb))
    assert acc <= ceiling + 4 * se
    assert acc >= ceiling - 0.015


def test_noise_for_ceiling_inverts_the_ceiling():
    for target in (0.6, 0.9, 0.99):
        s = bayes.noise_for_ceiling(target)
        assert bayes.bayes_accuracy_closed_form(s) == pytest.approx(target, abs=1e-10)
        assert bayes.bayes_accuracy(2.5, s) == pytest.approx(target, abs=1e-7)
    with pytest.raises(ValueError, match="noise_for_ceiling"):
        bayes.noise_for_ceiling(0.4)


def test_overlap_noise_is_fixed_by_its_ceiling_alone():
    s = spiral.overlap_noise()
    assert s == round(bayes.noise_for_ceiling(spiral.OVERLAP_CEILING), 3)
    assert bayes.bayes_accuracy(spiral.REVOLUTIONS, s) == pytest.approx(spiral.OVERLAP_CEILING,
                                                                        abs=5e-4)
