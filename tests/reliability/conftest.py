"""The fault-injection suite: registers the ``reliability`` marker (every test here has it)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "reliability: fault injection (kill -9, shared stores, corrupt files, hanging tools, "
        "provider errors, fuzzed model output); part of `make test`",
    )
