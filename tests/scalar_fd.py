"""The central difference the scalar tests compare against (not a test module)."""

H = 1e-6


def central_difference(f, xs, i, h=H):
    """(f(x + h e_i) - f(x - h e_i)) / 2h: error O(h^2) from truncation, O(eps/h) from rounding."""
    up, down = list(xs), list(xs)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)
