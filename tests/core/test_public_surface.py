"""The curated public surface: documented import paths, ``__all__`` lists, light imports."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import subprocess
import sys

import pytest

# Package modules whose ``__all__`` is the curated public surface (STYLE.md practice 4).
PUBLIC_PACKAGES = [
    "deskwork",
    "deskwork.core",
    "deskwork.tools",
    "deskwork.store",
    "deskwork.memory",
    "deskwork.adapters",
    "deskwork.runtime",
    "deskwork.testing",
]
# Modules with their own ``__all__`` that the docs import from directly.
PUBLIC_MODULES = [
    "deskwork.exceptions",
    "deskwork.event_bus",
    "deskwork.logging",
    "deskwork.utils",
    "deskwork.worker_context",
    "deskwork.desk",
    "deskwork.worker",
    "deskwork.core.event",
    "deskwork.core.job",
    "deskwork.core.tool_call",
    "deskwork.core.types",
    "deskwork.core.payloads",
    "deskwork.tools.base",
    "deskwork.tools.execution",
    "deskwork.adapters.base",
]
_TYPING_HELPERS = {"Any", "TYPE_CHECKING", "annotations"}


def _lazy_target(module: object, name: str) -> str | None:
    table = getattr(module, "_LAZY", None)
    if isinstance(table, dict) and name in table:
        return str(table[name])
    return None


@pytest.mark.parametrize("modname", PUBLIC_PACKAGES + PUBLIC_MODULES)
def test_all_is_sorted_and_unique(modname: str) -> None:
    module = importlib.import_module(modname)
    names = list(module.__all__)
    assert names == sorted(names), f"{modname}.__all__ is not sorted"
    assert len(names) == len(set(names)), f"{modname}.__all__ has duplicates"


@pytest.mark.parametrize("modname", PUBLIC_PACKAGES)
def test_package_all_is_complete(modname: str) -> None:
    module = importlib.import_module(modname)
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    missing = public - set(module.__all__) - _TYPING_HELPERS
    assert not missing, f"public names of {modname} missing from __all__: {sorted(missing)}"


def _all_names() -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for modname in PUBLIC_PACKAGES + PUBLIC_MODULES:
        module = importlib.import_module(modname)
        pairs.extend((modname, name) for name in module.__all__)
    return pairs


@pytest.mark.parametrize(("modname", "name"), _all_names())
def test_every_exported_name_resolves(modname: str, name: str) -> None:
    module = importlib.import_module(modname)
    lazy = {
        "deskwork.memory": {"VectorMemoryStore": "deskwork.memory.vector"},
        "deskwork.adapters": {"LiteLLMAdapter": "deskwork.adapters.litellm"},
    }.get(modname, {})
    target = _lazy_target(module, name) or lazy.get(name)
    if target is not None and importlib.util.find_spec(target) is None:
        pytest.skip(f"{modname}.{name} is lazy and {target} is not in the tree yet")
    if name == "VectorMemoryStore" and importlib.util.find_spec("chromadb") is None:
        pytest.skip("the vector extra (chromadb) is not installed")
    assert getattr(module, name) is not None


def test_unknown_attribute_raises_attribute_error() -> None:
    import deskwork
    import deskwork.tools

    with pytest.raises(AttributeError):
        _ = deskwork.NoSuchThing
    with pytest.raises(AttributeError):
        _ = deskwork.tools.NoSuchThing


def test_package_reexports_cover_core_payloads_and_exceptions() -> None:
    import deskwork
    import deskwork.core
    import deskwork.core.payloads
    import deskwork.exceptions

    for source in (deskwork.core, deskwork.core.payloads, deskwork.exceptions):
        for name in source.__all__:
            assert name in deskwork.__all__, name
            assert getattr(deskwork, name) is getattr(source, name)


def test_documented_import_paths() -> None:
    """Every import the core documentation shows, with ``blackgeorge`` read as ``deskwork``."""
    from deskwork import (
        AssistantMessagePayload,
        Brief,
        ContextLimitError,
        Desk,
        DeskworkError,
        Event,
        EventBus,
        EventType,
        Job,
        LLMCompletedPayload,
        LLMFailedPayload,
        Message,
        PendingAction,
        Report,
        RunConfig,
        RunFailedPayload,
        RunOutput,
        RunRecord,
        RunStartedPayload,
        RunState,
        StepCompletedPayload,
        StepPausedPayload,
        StreamTokenPayload,
        ToolCall,
        ToolCompletedPayload,
        ToolExecutionError,
        ToolFailedPayload,
        ToolStartedPayload,
        Worker,
        WorkerContextSummarizedPayload,
        WorkerFailedPayload,
        WorkerPausedPayload,
        WorkerSession,
        WorkforcePausedPayload,
        encode_file,
        new_id,
        utc_now,
    )
    from deskwork.adapters.base import BaseModelAdapter, ModelResponse
    from deskwork.core.event import Event as CoreEvent
    from deskwork.core.job import Job as CoreJob
    from deskwork.core.tool_call import ToolCall as CoreToolCall
    from deskwork.core.types import MessageRole, PendingActionType, RunStatus, WorkforceMode
    from deskwork.desk import Desk as DeskAlias
    from deskwork.event_bus import EventBus as BusAlias
    from deskwork.exceptions import (
        EventHandlerError,
        RunnerNotRegisteredError,
        StreamingUnsupportedError,
        ToolTimeoutError,
        ToolValidationError,
    )
    from deskwork.logging import StructuredLogger, get_logger
    from deskwork.memory import ExternalMemoryStore, InMemoryMemoryStore, SQLiteMemoryStore
    from deskwork.store import (
        InMemoryRunStore,
        InMemorySessionStore,
        RunStore,
        SQLiteRunStore,
        SQLiteSessionStore,
    )
    from deskwork.store import RunRecord as StoreRunRecord
    from deskwork.store import RunState as StoreRunState
    from deskwork.tools import (
        Tool,
        Toolbelt,
        Toolkit,
        ToolPostHook,
        ToolPreHook,
        ToolResult,
        tool,
        transfer_to_agent_tool,
    )
    from deskwork.tools.base import ToolResult as BaseToolResult
    from deskwork.tools.execution import aexecute_tool, execute_tool
    from deskwork.utils import encode_file as utils_encode_file
    from deskwork.worker import Worker as WorkerAlias
    from deskwork.worker_context import (
        SUMMARY_ATTEMPT_LIMIT,
        SUMMARY_CHUNK_TOKENS,
        SUMMARY_MAX_OUTPUT_TOKENS,
        SUMMARY_TAIL_MESSAGES,
        is_context_limit_error,
    )

    assert DeskAlias is Desk and WorkerAlias is Worker and BusAlias is EventBus
    assert CoreEvent is Event and CoreJob is Job and CoreToolCall is ToolCall
    assert StoreRunRecord is RunRecord and StoreRunState is RunState
    assert BaseToolResult is ToolResult and utils_encode_file is encode_file
    assert Brief is Job and RunOutput is Report and Toolkit is Toolbelt
    assert issubclass(ContextLimitError, DeskworkError)
    assert issubclass(ToolExecutionError, DeskworkError)
    for exc in (EventHandlerError, RunnerNotRegisteredError, StreamingUnsupportedError):
        assert issubclass(exc, DeskworkError)
    assert issubclass(ToolTimeoutError, DeskworkError) and issubclass(
        ToolValidationError, Exception
    )
    assert (SUMMARY_CHUNK_TOKENS, SUMMARY_TAIL_MESSAGES) == (2000, 4)
    assert (SUMMARY_ATTEMPT_LIMIT, SUMMARY_MAX_OUTPUT_TOKENS) == (2, 800)
    assert callable(is_context_limit_error) and callable(aexecute_tool) and callable(execute_tool)
    assert callable(tool) and callable(transfer_to_agent_tool) and callable(get_logger)
    for cls in (
        BaseModelAdapter,
        RunStore,
        InMemoryRunStore,
        SQLiteRunStore,
        InMemorySessionStore,
        SQLiteSessionStore,
        InMemoryMemoryStore,
        SQLiteMemoryStore,
        ExternalMemoryStore,
        StructuredLogger,
        ModelResponse,
        Tool,
        Message,
        PendingAction,
        WorkerSession,
        RunConfig,
        AssistantMessagePayload,
        LLMCompletedPayload,
        LLMFailedPayload,
        RunFailedPayload,
        RunStartedPayload,
        StepCompletedPayload,
        StepPausedPayload,
        StreamTokenPayload,
        ToolCompletedPayload,
        ToolFailedPayload,
        ToolStartedPayload,
        WorkerFailedPayload,
        WorkerContextSummarizedPayload,
        WorkerPausedPayload,
        WorkforcePausedPayload,
    ):
        assert isinstance(cls, type), cls
    assert ToolPreHook is not None and ToolPostHook is not None
    assert MessageRole and PendingActionType and RunStatus and WorkforceMode
    assert str(EventType.WORKER_STARTED) == "worker.started"
    assert EventType("worker.started") is EventType.WORKER_STARTED
    assert EventType.WORKER_STARTED.value == "worker.started"
    assert len(new_id()) == 32 and utc_now().tzinfo is not None


def test_documented_event_type_table() -> None:
    from deskwork import EventType

    documented = {
        "RUN_STARTED": "run.started",
        "RUN_COMPLETED": "run.completed",
        "RUN_FAILED": "run.failed",
        "RUN_PAUSED": "run.paused",
        "RUN_RESUMED": "run.resumed",
        "STEP_STARTED": "step.started",
        "STEP_COMPLETED": "step.completed",
        "STEP_PAUSED": "step.paused",
        "WORKER_STARTED": "worker.started",
        "WORKER_COMPLETED": "worker.completed",
        "WORKER_FAILED": "worker.failed",
        "WORKER_PAUSED": "worker.paused",
        "WORKER_CONTEXT_SUMMARIZED": "worker.context_summarized",
        "WORKFORCE_STARTED": "workforce.started",
        "WORKFORCE_COMPLETED": "workforce.completed",
        "TOOL_STARTED": "tool.started",
        "TOOL_COMPLETED": "tool.completed",
        "TOOL_FAILED": "tool.failed",
        "TOOL_CONFIRMATION_REQUESTED": "tool.confirmation_requested",
        "TOOL_USER_INPUT_REQUESTED": "tool.user_input_requested",
        "STREAM_TOKEN": "stream.token",
        "ASSISTANT_MESSAGE": "assistant.message",
        "LLM_STARTED": "llm.started",
        "LLM_COMPLETED": "llm.completed",
        "LLM_FAILED": "llm.failed",
    }
    for member, value in documented.items():
        assert EventType[member] == value
        assert EventType[member].value == value


_LIGHT_IMPORT = """
import json, sys
import deskwork, deskwork.tools, deskwork.store, deskwork.memory, deskwork.adapters
import deskwork.testing, deskwork.runtime, deskwork.worker_context, deskwork.logging
from deskwork import Desk, Worker
Desk(model="openai/gpt-5-nano", storage_dir=sys.argv[1])  # building a desk stays light
heavy = ("litellm", "langgraph", "langchain_core", "chromadb", "mcp", "instructor")
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
"""


def test_import_deskwork_does_not_import_optional_integrations(tmp_path: object) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _LIGHT_IMPORT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
