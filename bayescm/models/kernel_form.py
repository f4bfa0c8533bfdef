"""What :meth:`bayescm.models.Family.kernel_form` returns: a compiled density without PyMC.

A family whose density is a cached compiled kernel (:class:`~bayescm.models.Kernel`) can
lay out the kernel's inputs from the data and the resolved priors directly, without
building the ``pm.Model``; :func:`bayescm.inference.fit_kernel` samples it with nutpie and
completes the draws as ``fit`` does.  A family whose posterior is conjugate given
latent data may also give a Gibbs sampler of the same posterior in NumPy (``gibbs``),
which needs no compiler and no nutpie.  This is how ``bayescm unlabeled`` answers
without importing PyMC, PyTensor, nutpie or ArviZ.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import xarray as xr

from bayescm.family import Kernel, ModelSpec

__all__ = ["KernelForm"]


@dataclass(frozen=True)
class KernelForm:
    """A model's compiled density made from its data and priors.

    Attributes
    ----------
    spec
        The :class:`~bayescm.models.ModelSpec` the builder would attach.
    make_kernel
        Makes the compiled density: :attr:`kernel`, made on first use (it loads the
        compiled module, which a Gibbs run does not need).
    dims
        ``name -> dims`` of each expanded variable's unit shape (the model's ``dims=``).
    coords
        Coordinates of those dims.
    observed
        The model's observed counts (``counts_data``) with their dims, or None.
    gibbs
        ``gibbs(draws=, tune=, chains=, seed=)``: the expanded variables'
        ``(chains, draws, ...)`` arrays drawn by a Gibbs sampler of the same posterior,
        or None when the family has none for this model.
    """

    spec: ModelSpec
    make_kernel: Callable[[], Kernel]
    dims: Mapping[str, tuple[str, ...]]
    coords: Mapping[str, Sequence[Any]]
    observed: xr.DataArray | None = None
    gibbs: Callable[..., dict[str, Any]] | None = None

    @functools.cached_property
    def kernel(self) -> Kernel:
        """Equal to :meth:`Family.kernel <bayescm.models.Family.kernel>` of the built
        model (the same ``user_data``)."""
        return self.make_kernel()

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Each expanded variable's unit shape, from :attr:`dims` and :attr:`coords`."""
        return {name: tuple(len(self.coords[d]) for d in dims)
                for name, dims in self.dims.items()}
