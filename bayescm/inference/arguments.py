"""Checks of arguments that size no work: :func:`bayescm.fit`'s seed and NUTS target
acceptance rate (the sizes are :func:`bayescm.inference.fit.check_sizes`), and the fit
result that the checks and summaries read."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayescm import idata as idata_mod

__all__ = ["check_fit_result", "check_seed", "check_target_accept"]


def check_seed(random_seed: Any) -> None:
    """Raise unless ``random_seed`` is None, an integer >= 0 or a NumPy seed object.

    What :func:`numpy.random.default_rng` accepts, less its bare ``expected
    non-negative integer``: the message names the argument.

    >>> check_seed(1); check_seed(None)
    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    ValueError: random_seed must be an integer >= 0 (or None for a fresh seed), got -1.
    """
    if random_seed is None or isinstance(
            random_seed, np.random.Generator | np.random.BitGenerator | np.random.SeedSequence):
        return
    if not isinstance(random_seed, int | np.integer) or isinstance(random_seed, bool | np.bool_):
        raise TypeError("random_seed must be an integer >= 0 (or None for a fresh seed), got "
                        f"{type(random_seed).__name__} {random_seed!r}.")
    if random_seed < 0:
        raise ValueError("random_seed must be an integer >= 0 (or None for a fresh seed), got "
                         f"{random_seed!r}.")


def check_target_accept(target_accept: Any) -> None:
    """Raise unless ``target_accept`` is None or a number strictly between 0 and 1.

    >>> check_target_accept(0.95)
    >>> check_target_accept(2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: target_accept is NUTS's target acceptance rate, ... got 2.
    """
    if target_accept is None:
        return
    if (not isinstance(target_accept, int | float | np.integer | np.floating)
            or isinstance(target_accept, bool | np.bool_)
            or not 0 < float(target_accept) < 1):
        raise ValueError("target_accept is NUTS's target acceptance rate, a number strictly "
                         "between 0 and 1 (e.g. 0.9, or 0.99 against divergences), got "
                         f"{target_accept!r}.")


def check_fit_result(obj: Any, what: str = "idata") -> None:
    """Raise a TypeError unless ``obj`` is what :func:`bayescm.fit` returns (an
    ``arviz.InferenceData``; :func:`bayescm.fit_closed_form`'s ``xarray.DataTree``).

    >>> check_fit_result("x")
    Traceback (most recent call last):
    ...
    TypeError: idata must be an arviz.InferenceData from bayescm.fit (or bayescm.load), got str.
    """
    import xarray as xr

    if not (idata_mod.is_inference_data(obj) or isinstance(obj, xr.DataTree)):
        raise TypeError(f"{what} must be an arviz.InferenceData from bayescm.fit (or "
                        f"bayescm.load), got {type(obj).__name__}.")
