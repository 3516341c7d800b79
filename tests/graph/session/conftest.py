"""Reuse the store suite's ``postgres_url`` fixture (an isolated schema on the test server).

It skips without a reachable PostgreSQL server, and fails instead when CI sets
``DESKWORK_REQUIRE_POSTGRES=1``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "_deskwork_store_fixtures", Path(__file__).parents[2] / "store" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
_store_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_store_fixtures)

postgres_url = _store_fixtures.postgres_url
