"""What :meth:`bayescm.models.Family.kernel_form` returns: a compiled density without PyMC.

A family whose density is a cached compiled kernel (:class:`~bayescm.models.Kernel`) can
lay out the kernel's inputs from the data and the resolved priors directly, without
building the ``pm.Model``; :func:`bayescm.inference.fit_kernel` samples it with nutpie and
completes the draws as ``fit`` does.  This is how ``bayescm unlabeled`` answers without
importing PyMC or PyTensor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    kernel
        Equal to :meth:`Family.kernel <bayescm.models.Family.kernel>` of the built
        model (the same ``user_data``).
    dims
        ``name -> dims`` of each expanded variable's unit shape (the model's ``dims=``).
    coords
        Coordinates of those dims.
    observed
        The model's observed counts (``counts_data``) with their dims, or None.
    """

    spec: ModelSpec
    kernel: Kernel
    dims: Mapping[str, tuple[str, ...]]
    coords: Mapping[str, Sequence[Any]]
    observed: xr.DataArray | None = None
