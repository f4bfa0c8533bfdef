r"""Special functions compiled for the models' and analyses' numba kernels.

:func:`digamma` :math:`\psi(x)` for :math:`x > 0`: the recurrence
:math:`\psi(x) = \psi(x + 1) - 1/x` up to :math:`x \ge 10`, then the asymptotic
series :math:`\log x - \tfrac{1}{2x} - \sum_k B_{2k}/(2k\,x^{2k})` to :math:`x^{-10}`
(absolute error below 1e-13 there; tested against ``scipy.special.digamma``).
"""

import math

import numba

__all__ = ["digamma"]


# error_model="numpy": a kernel that reaches x = 0 far out in the tails (a rate that
# underflows to 0) gets -inf, as SciPy gives, not a ZeroDivisionError that a cfunc
# cannot raise (numba prints it as unraisable and the density's value is then garbage)
@numba.njit(cache=True, error_model="numpy")
def digamma(x):  # pragma: no cover - compiled
    """:math:`\\psi(x)` for :math:`x > 0` (:math:`-\\infty` at 0, as SciPy)."""
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))))
    return acc + math.log(x) - 0.5 / x - series
