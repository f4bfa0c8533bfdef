"""The version of bayescm, in one place (read by the package, saved fits and reports)."""

__version__ = "0.1.0"
