"""Renamed keyword arguments stay accepted, with a DeprecationWarning.

bayescm renames a public argument only to make the API say one thing one way
(``hdi_prob`` for every interval mass, ``priors={name: prior}`` for every prior).
The old keyword keeps working for users' existing code: it warns with a
:class:`DeprecationWarning` (not a FutureWarning, which the test suite turns into
an error) and gives exactly the result of the new keyword.

Examples
--------
>>> import warnings
>>> @renamed_kwargs(level="hdi_prob")
... def interval(*, hdi_prob=0.95):
...     return hdi_prob
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     interval(level=0.9), caught[0].category.__name__
(0.9, 'DeprecationWarning')
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["renamed_kwargs"]

F = TypeVar("F", bound=Callable[..., Any])


def renamed_kwargs(**renames: str | tuple[str, Callable[[Any], Any]]) -> Callable[[F], F]:
    """Decorator: ``old=new`` (or ``old=(new, convert)``) keyword aliases.

    A call with ``old=value`` warns once per call site and passes ``new=value``
    (``new=convert(value)`` when the meaning of the value changed too, e.g. a
    ``(a, b)`` pair that is now one entry of a ``priors`` mapping).  Passing both
    names is a TypeError.
    """

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, target in renames.items():
                if old not in kwargs:
                    continue
                new, convert = (target, None) if isinstance(target, str) else target
                if new in kwargs:
                    raise TypeError(f"{func.__name__}() got both {new}= and its deprecated "
                                    f"alias {old}=; pass {new}= only.")
                warnings.warn(f"{func.__name__}({old}=...) is deprecated; use {new}=... "
                              f"instead.", DeprecationWarning, stacklevel=2)
                value = kwargs.pop(old)
                kwargs[new] = value if convert is None else convert(value)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
