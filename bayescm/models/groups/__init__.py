"""Logit-normal hierarchy of prevalence, TPR and TNR over slices and time windows.

The family's folder holds its builder and hooks (``model``) and its private parts
(``design``, ``kernel``, ``twin``); the model card is ``models/groups/README.md`` in the
repository.
"""

from bayescm.models.groups.model import Groups, groups

__all__ = ["Groups", "groups"]
