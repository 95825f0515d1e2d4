"""Families of OP_SPECS rows kept outside tests/specs.py, one module per family.

Each module imports ``_row`` (and the domains) from ``specs`` and calls it at import time;
``specs`` imports every module here just before it builds ``SPECS_BY_NAME``, so a row
written here is picked up by every check that reads OP_SPECS (gradcheck, gradgradcheck,
jvp, float32, replay, the torch oracle).
"""
