"""A SQLite path deskwork cannot use is a StoreError that says why, not a raw OSError, and
never called damaged (whose advice is to move the "database" away)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskwork import Desk
from deskwork.exceptions import StoreError


@pytest.mark.parametrize(
    ("where", "why"),
    [
        ("a-file", "cannot make the directory of the deskwork database"),
        ("a-file/below", "cannot make the directory of the deskwork database"),
    ],
)
def test_a_storage_dir_that_cannot_be_made_is_a_store_error(
    tmp_path: Path, where: str, why: str
) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    with pytest.raises(StoreError, match=why) as raised:
        Desk(model="scripted", storage_dir=tmp_path / where).run_store  # noqa: B018
    assert "damaged" not in str(raised.value)


def test_a_directory_named_as_the_database_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory, not a deskwork database file"):
        Desk(model="scripted", database_url=f"sqlite:///{tmp_path}").run_store  # noqa: B018
