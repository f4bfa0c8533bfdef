"""The app's pages, one module each; every module declares ``PAGE``
(a :class:`bayescm.app.registry.Page`).  See :mod:`bayescm.app` for how to add one."""
