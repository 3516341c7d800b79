"""Every ``python`` block of the documentation site runs offline, so the docs cannot drift.

Blocks are collected from ``docs/site/**/*.md`` and run one by one in a fresh namespace, in a
temporary working directory (a desk stores its runs under ``./.deskwork``), with top-level
``await`` allowed. The samples use the scripted model (``deskwork.testing.ScriptedAdapter``)
themselves; provider API keys are removed so a sample that reaches for a real model fails.

A ``print(...)  # text`` line documents what it prints: when a block has such comments, its
output must be exactly those lines. A block preceded by ``<!-- skip-test -->`` needs a real
provider or server; it is only compiled. A durable sample (``durable=True``) runs in its own
interpreter.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import structlog.testing

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "docs" / "site"
BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SKIP = "<!-- skip-test -->"
MAX_SKIPPED = 3
MIN_BLOCKS = 10  # raised as pages are written


def _blocks() -> list[tuple[str, int, str, bool]]:
    """``(page, index, code, skipped)`` for every python block of the site."""
    found = []
    for page in sorted(SITE.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for index, match in enumerate(BLOCK.finditer(text)):
            before = text[: match.start()].rstrip().splitlines()
            skipped = bool(before) and before[-1].strip() == SKIP
            found.append((page.relative_to(SITE).as_posix(), index, match.group(1), skipped))
    return found


BLOCKS = _blocks()


def _expected_prints(code: str) -> list[str]:
    return re.findall(r"^[ \t]*print\(.*\)[ \t]+# (.+)$", code, flags=re.MULTILINE)


def test_the_site_has_samples_and_few_are_skipped() -> None:
    assert len(BLOCKS) >= MIN_BLOCKS
    assert sum(skipped for *_, skipped in BLOCKS) <= MAX_SKIPPED


@pytest.mark.parametrize(
    ("page", "index", "code", "skipped"),
    BLOCKS,
    ids=[f"{page}#{index}" for page, index, _, _ in BLOCKS],
)
def test_sample_runs(
    page: str,
    index: int,
    code: str,
    skipped: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    compiled = compile(
        code, f"docs/site/{page}:block{index}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    )
    if skipped:
        return
    if "deskwork.graph" in code:
        pytest.importorskip("langgraph", reason="the graph extra is not installed")
    monkeypatch.chdir(tmp_path)
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DESKWORK_DATABASE_URL"):
        monkeypatch.delenv(key, raising=False)
    expected = _expected_prints(code)
    if "durable=True" in code:
        output = _run_in_a_process(code, tmp_path)
    else:
        namespace: dict[str, Any] = {"__name__": "__main__"}
        with structlog.testing.capture_logs():
            if compiled.co_flags & inspect.CO_COROUTINE:
                asyncio.run(eval(compiled, namespace))
            else:
                exec(compiled, namespace)
        output = capsys.readouterr().out
    if expected:
        assert output.splitlines() == expected


def _run_in_a_process(code: str, cwd: Path) -> str:
    """Run a durable sample in its own interpreter: DBOS keeps process-wide state (its
    launched instance, logging handlers bound to the streams of the moment) that would leak
    into the tests that follow."""
    pytest.importorskip("dbos", reason="durable runs need the dbos extra")
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout


def test_included_pages_python_blocks_compile() -> None:
    """The docs/*.md sections the site includes are reference prose: they name real
    providers and servers, so their blocks are only compiled, not run."""
    included = set()
    for page in SITE.rglob("*.md"):
        included |= set(re.findall(r'^--8<-- "([^":]+)', page.read_text(encoding="utf-8"), re.M))
    assert included
    for name in sorted(included):
        text = (ROOT / name).read_text(encoding="utf-8")
        for index, match in enumerate(BLOCK.finditer(text)):
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            compile(match.group(1), f"{name}:block{index}", "exec", flags=flags)
