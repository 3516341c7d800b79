"""Subworkers: a tool through which a worker spawns bounded child workers.

Each spawn is a normal, separate run through ``Desk.arun`` (same adapter, run store, event
bus and memory store), with per-child limits. Guardrails are checked in this order, and a
rejected spawn does not count against the budget:

1. spawn budget (``max_subworkers`` successful spawns per tool instance);
2. model policy (``allowed_models``);
3. tool budget (``max_tools_per_subworker``);
4. tool allowlist (``available_tools``; unknown names are rejected).

The tool answers with a ``ToolResult``: on success the child's content and
``data={"run_id", "status", "worker", "metrics"}``; a failed or paused child is an error
(a paused child is never silently treated as done) with ``data={"run_id", "status",
"worker"}`` plus ``pending_action_type`` for a pause.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, ValidationError, field_validator

from deskwork.core._model import DeskworkModel
from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.core.tool_call import ToolResult
from deskwork.exceptions import ConfigurationError
from deskwork.runtime.desk import unnamed_run
from deskwork.runtime.worker import Worker
from deskwork.tools.base import Tool
from deskwork.utils import is_integer

if TYPE_CHECKING:
    from deskwork.runtime.desk import Desk

__all__ = ["SpawnSubworkerInput", "create_subworker_tool", "create_swarm_tool"]


class SpawnSubworkerInput(DeskworkModel):
    """Arguments of ``spawn_subworker`` / ``spawn_agent``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Name of the subworker")
    instructions: str = Field(description="System instructions for the subworker")
    task: str = Field(description="The task the subworker must complete")
    tools: list[str] = Field(
        default_factory=list, description="Names of the tools the subworker may use"
    )
    model: str | None = Field(default=None, description="Model for the subworker (optional)")

    @field_validator("tools", mode="before")
    @classmethod
    def _null_is_no_tools(cls, value: Any) -> Any:
        """``null`` is no tools: OpenAI's strict mode sends it for an optional field."""
        return [] if value is None else value


@dataclass(slots=True)
class _Policy:
    """The guardrails of one tool instance, and its spawn count."""

    desk: Desk
    tools: dict[str, Tool]
    default_model: str | None
    allowed_models: frozenset[str] | None
    max_subworkers: int
    max_tools: int
    limits: dict[str, Any]
    spawned: int = 0

    def reject(self, model: str | None, tools: list[str]) -> str | None:
        """Why this spawn is not allowed, or ``None``."""
        if self.spawned >= self.max_subworkers:
            return f"subworker budget exhausted: max_subworkers={self.max_subworkers}"
        if not model:
            return "no model for the subworker: pass model, or set default_model or Desk(model=)"
        if self.allowed_models is not None and model not in self.allowed_models:
            allowed = ", ".join(sorted(self.allowed_models))
            return f"model {model!r} is not allowed for subworkers (allowed: {allowed})"
        if len(tools) > self.max_tools:
            return f"too many tools for one subworker: {len(tools)} > {self.max_tools}"
        unknown = [name for name in tools if name not in self.tools]
        if unknown:
            available = ", ".join(sorted(self.tools)) or "none"
            return f"unknown tools: {', '.join(unknown)} (available: {available})"
        return None

    async def spawn(
        self,
        name: str,
        instructions: str,
        task: str,
        tools: list[str] | None = None,
        model: str | None = None,
    ) -> ToolResult:
        """The tool's body: check the guardrails, then run the child."""
        tool_names = list(dict.fromkeys(tools or ()))
        resolved = model or self.default_model or self.desk.model
        error = self.reject(resolved, tool_names)
        if error is not None:
            return ToolResult(error=error, exception_type="SubworkerPolicy")
        try:  # (a name Worker refuses, an empty task or one too large, spends no spawn)
            child = Worker(
                name=name,
                tools=[self.tools[t] for t in tool_names],
                model=resolved,
                instructions=instructions,
            )
            job = Job(input=task)
        except (ConfigurationError, ValidationError) as exc:
            return ToolResult(error=_why(exc), exception_type="SubworkerPolicy")
        self.spawned += 1  # before awaiting, so parallel spawns cannot exceed the budget
        return _result(await _run_child(self.desk, child, job, self.limits), name)


def create_subworker_tool(
    desk: Desk,
    available_tools: Iterable[Tool] = (),
    default_model: str | None = None,
    allowed_models: Iterable[str] | None = None,
    max_subworkers: int = 5,
    max_tools_per_subworker: int = 8,
    max_iterations: int = 10,
    max_tool_calls: int = 10,
    structured_output_retries: int = 1,
    name: str = "spawn_subworker",
) -> Tool:
    """A tool that spawns a bounded child worker as a separate run on ``desk``.

    Args:
        desk: runs the children (same adapter, run store, event bus and memory).
        available_tools: the tools a subworker may be given (by name).
        default_model: the model when a spawn does not name one (else the desk's model).
        allowed_models: if given, the only models a subworker may use.
        max_subworkers: successful spawns allowed for this tool instance.
        max_tools_per_subworker: tools one spawn may request.
        max_iterations: model turns per child run.
        max_tool_calls: tool calls per child run.
        structured_output_retries: structured-output retries per child run.
        name: the tool's name.

    Raises:
        ConfigurationError: ``desk`` is not a Desk, a budget is out of range, an available
            tool is not a tool, or ``allowed_models`` is one string.
    """
    from deskwork.runtime.desk import Desk

    if not isinstance(desk, Desk):
        raise ConfigurationError(f"desk must be a Desk (it runs the children), not {desk!r}")
    _check_budgets(
        max_subworkers,
        max_tools_per_subworker,
        max_iterations,
        max_tool_calls,
        structured_output_retries,
    )
    policy = _Policy(
        desk=desk,
        tools=_tools_by_name(available_tools),
        default_model=default_model,
        allowed_models=_models(allowed_models),
        max_subworkers=max_subworkers,
        max_tools=max_tools_per_subworker,
        limits={
            "max_iterations": max_iterations,
            "max_tool_calls": max_tool_calls,
            "structured_output_retries": structured_output_retries,
        },
    )

    return Tool(
        name=name,
        description=_description(policy),
        callable=policy.spawn,
        input_model=SpawnSubworkerInput,
    )


def create_swarm_tool(
    desk: Desk,
    available_tools: Iterable[Tool] = (),
    default_model: str | None = None,
    allowed_models: Iterable[str] | None = None,
    max_subworkers: int = 5,
    max_tools_per_subworker: int = 8,
    max_iterations: int = 10,
    max_tool_calls: int = 10,
    structured_output_retries: int = 1,
    name: str = "spawn_agent",
) -> Tool:
    """:func:`create_subworker_tool` under the compatibility name ``spawn_agent``."""
    return create_subworker_tool(
        desk,
        available_tools,
        default_model,
        allowed_models,
        max_subworkers,
        max_tools_per_subworker,
        max_iterations,
        max_tool_calls,
        structured_output_retries,
        name,
    )


def _check_budgets(
    subworkers: int, tools: int, iterations: int, tool_calls: int, retries: int
) -> None:
    for label, value, low in (
        ("max_subworkers", subworkers, 1),
        ("max_tools_per_subworker", tools, 0),
        ("max_iterations", iterations, 1),
        ("max_tool_calls", tool_calls, 0),
        ("structured_output_retries", retries, 0),
    ):
        if not is_integer(value) or value < low:
            raise ConfigurationError(f"{label} must be an int >= {low}, got {value!r}")


def _tools_by_name(tools: Iterable[Tool]) -> dict[str, Tool]:
    by_name: dict[str, Tool] = {}
    for item in tools:
        if not isinstance(item, Tool):
            raise ConfigurationError(
                f"available_tools must hold tools (decorate with @tool), not {item!r}"
            )
        by_name[item.name] = item
    return by_name


def _models(models: Iterable[str] | None) -> frozenset[str] | None:
    if models is None:
        return None
    if isinstance(models, str):  # frozenset("gpt-4") would allow the letters g, p, t, ...
        raise ConfigurationError(f"allowed_models must be a set of names, not {models!r}")
    return frozenset(models)


def _why(exc: Exception) -> str:
    """A refused spawn's reason: the Job's own words for a task it refuses."""
    if isinstance(exc, ValidationError):
        reasons = (str(error.get("ctx", {}).get("error", error["msg"])) for error in exc.errors())
        return f"the subworker's task is refused: {'; '.join(reasons)}"
    return str(exc)


async def _run_child(desk: Desk, child: Worker, job: Job, limits: dict[str, Any]) -> Report:
    """Run ``child`` as its own run, outside the desk's name registry: the desk's runners
    stay as they were, and ``deskwork serve`` never offers a model-made worker. A paused
    child stays resumable in this process by the ``run_id`` of the tool's data (the desk
    keeps the exact runner of each paused run)."""
    token = unnamed_run.set(True)
    try:
        return await desk.arun(child, job, stream=False, limits=limits)
    finally:
        unnamed_run.reset(token)


def _result(report: Report, worker: str) -> ToolResult:
    data: dict[str, Any] = {"run_id": report.run_id, "status": report.status, "worker": worker}
    if report.status == "completed":
        return ToolResult(content=report.content or "", data={**data, "metrics": report.metrics})
    if report.status == "paused":
        kind = report.pending_action.type if report.pending_action else "unknown"
        data["pending_action_type"] = kind
        error = f"subworker {worker!r} paused waiting for {kind} (run {report.run_id})"
    else:
        error = f"subworker {worker!r} failed: {'; '.join(report.errors) or 'unknown error'}"
    return ToolResult(error=error, data=data, exception_type="SubworkerFailed")


def _description(policy: _Policy) -> str:
    parts = [
        "Delegate a self-contained task to a new subworker and get its answer.",
        f"Tools a subworker may use: {', '.join(policy.tools) or 'none'}.",
        f"At most {policy.max_subworkers} subworkers, {policy.max_tools} tools each.",
    ]
    if policy.allowed_models is not None:
        parts.append(f"Allowed models: {', '.join(sorted(policy.allowed_models))}.")
    return " ".join(parts)
