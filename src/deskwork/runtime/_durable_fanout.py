"""Fan-out over workers: the members of a collaborate workforce or the branches of a
``Parallel`` run as child durable runs that any worker serving a queue may pick up.

::

    parent run (DBOS workflow "deskwork.run")
      │ Workforce(mode="collaborate", distribute=...) / Parallel(..., distribute=...)
      ├─ step "deskwork.fanout"        the child run ids (recorded: a replay reuses them)
      ├─ enqueue child 1..n            DBOS child workflows "deskwork.run" on the queue
      │     request: the root runner registered on the desk + the path to the member
      └─ await child 1..n              each a recorded step; its report read from the run store
    child run (any worker serving the queue)
      └─ the member, as a run of its own: run.started {"parent_run_id": ...}

The enqueues and the awaits are checkpointed in the parent's workflow, so a recovered
parent enqueues nothing twice: it waits for the children it had started. A child is a
durable run like any other (its model and tool calls are steps), so a worker that dies
mid-member has that member taken over by a live worker and continued once.

A child finds its member the way a recovered run finds its runner: by the type and name of
the runner registered on the desk (``desk.register``) and, below it, the member's path
through the runner's structure (workforce members, flow steps, branches). Both processes
must build that structure from the same code.

Outside a durable run (a desk without ``durable=True``, or inside a tool's step) the caller
runs its members in-process as before: :func:`can_fan_out` says which.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.exceptions import ConfigurationError
from deskwork.utils import new_id

if TYPE_CHECKING:
    from deskwork.runtime.config import RunConfig
    from deskwork.runtime.desk import Desk
    from deskwork.runtime.runner import Runner

__all__ = [
    "DEFAULT_QUEUE",
    "FANOUT_MEMBER_ENDED",
    "FANOUT_STARTED",
    "Distribute",
    "can_fan_out",
    "check_distribute",
    "fan_out",
    "member_of",
    "parent_link",
]

Distribute = bool | str
"""``False``: members run in-process; ``True``: on the queue of the run itself
(:data:`DEFAULT_QUEUE` for a run that was not submitted); a string: on that queue."""
DEFAULT_QUEUE = "default"
FANOUT_STARTED = "fanout.started"
"""Emitted in the parent run: ``{"queue", "members": [{"member", "run_id"}]}``."""
FANOUT_MEMBER_ENDED = "fanout.member_ended"
"""Emitted in the parent run as each child ends: ``{"member", "run_id", "status",
"executor_id"}`` (the DBOS executor that ran it)."""
MEMBER_KEY = "member"
"""Key of a child run's request: where its member is under the root runner."""
RESULT_POLL_SECONDS = 0.1
_LIMITS = ("max_iterations", "max_tool_calls", "structured_output_retries")


def check_distribute(distribute: Any, owner: str) -> Distribute:
    """``distribute`` if it is a valid setting.

    Raises:
        ConfigurationError: it is neither a bool nor a non-empty queue name.
    """
    if isinstance(distribute, bool):
        return distribute
    if isinstance(distribute, str) and distribute.strip():
        return distribute
    raise ConfigurationError(
        f"{owner}: distribute must be True, False or a queue name, not {distribute!r}"
    )


def can_fan_out(config: RunConfig) -> bool:
    """Whether members can run as child durable runs here: the desk is durable and the
    caller is the workflow code of a durable run (not a step, such as a tool's child run)."""
    desk = config.desk
    if desk is None or not desk.durable:
        return False
    from deskwork.runtime._durable_steps import in_workflow

    return in_workflow()


async def fan_out(
    config: RunConfig,
    members: Sequence[tuple[Runner, Job]],
    distribute: Distribute,
    source: str,
    *,
    positions: Sequence[int] | None = None,
) -> list[Report]:
    """Run each ``(member, job)`` as a child durable run on the queue ``distribute`` names
    and wait for all of them; their reports, in order (call only if :func:`can_fan_out`).

    A child that fails, or whose workflow fails, gives a failed report; one that pauses
    gives a failed report naming its paused run (a fanned-out member cannot pause the
    parent). Each child's cost is charged to the parent's budget.

    ``positions`` are the members' places among the caller's own (``0..n-1`` by default),
    which number their child run ids: when only some of a Parallel's steps run, a recovered
    parent, whose steps may not fail as before, still finds each step's own child.

    Raises:
        ConfigurationError: a member is not part of a runner registered on the desk.
    """
    from dbos import DBOS, SetWorkflowID

    from deskwork.runtime import _durable

    desk = config.desk
    assert desk is not None
    requests = [_request(desk, config, member, job) for member, job in members]
    queue = await _queue_name(distribute)
    gate = await asyncio.to_thread(_open_queue, desk, queue)
    tag = await DBOS.run_step_async({"name": "deskwork.fanout"}, _new_tag)
    places = range(len(requests)) if positions is None else positions
    for place, request in zip(places, requests, strict=True):
        request.update(run_id=f"{config.run_id}.{tag}.{place + 1}", gate=gate)
    started = [{"member": r[MEMBER_KEY]["name"], "run_id": r["run_id"]} for r in requests]
    config.emit(FANOUT_STARTED, source, {"queue": queue, "members": started})
    handles = []
    for request in requests:
        with SetWorkflowID(request["run_id"]):
            handles.append(
                await DBOS.enqueue_workflow_async(queue, _durable._run_workflow, request)
            )
    reports = []
    for request, handle in zip(requests, handles, strict=True):
        reports.append(await _await_child(config, request, handle, source))
    return reports


def _open_queue(desk: Desk, queue: str) -> str | None:
    """Make sure ``queue`` exists; the queue that admits its runs' model calls when it has
    a model-request limit (the children pass the same gate as runs submitted to it)."""
    from deskwork.runtime import _durable

    _durable.engine_for(desk).queue(queue)
    return _durable.gate_name(queue) if _durable._rate_limited(queue) else None


async def _new_tag() -> str:
    return new_id()[:8]


async def _queue_name(distribute: Distribute) -> str:
    """The queue the members go to: the one named, else the parent run's own queue."""
    if isinstance(distribute, str):
        return distribute
    from dbos import DBOS

    status = await DBOS.get_workflow_status_async(DBOS.workflow_id or "")
    name = status.queue_name if status is not None else None
    if not name or name.startswith("_dbos"):  # started directly, or DBOS's internal queue
        return DEFAULT_QUEUE
    return name


def _request(desk: Desk, config: RunConfig, member: Runner, job: Job) -> dict[str, Any]:
    """The child's workflow input: the root runner it is found under, and where."""
    from deskwork.runtime._durable_versions import code_digest

    root, path = _locate(desk, member)
    return {
        "runner_type": root.runner_type,
        "runner_name": root.name,
        "code": code_digest(root),  # recover() refuses other code (_durable_versions)
        MEMBER_KEY: {
            "path": path,
            "runner_type": member.runner_type,
            "name": member.name,
            "parent_run_id": config.run_id,
        },
        "job": job.to_state(),
        "stream": config.stream,
        "limits": {name: getattr(config, name) for name in _LIMITS},
    }


async def _await_child(
    config: RunConfig, request: dict[str, Any], handle: Any, source: str
) -> Report:
    from dbos import DBOS

    from deskwork.runtime import _durable

    desk, run_id = config.desk, request["run_id"]
    assert desk is not None
    try:
        await handle.get_result(polling_interval_sec=RESULT_POLL_SECONDS)
        report = await asyncio.to_thread(_durable._report_from_store, desk, run_id)
    except Exception as exc:  # the child's workflow failed (its member not found, say)
        report = await asyncio.to_thread(_durable._failed_run, desk, run_id, exc)
    status = await DBOS.get_workflow_status_async(run_id)
    member = request[MEMBER_KEY]["name"]
    ended = {
        "member": member,
        "run_id": run_id,
        "status": report.status,
        "executor_id": status.executor_id if status is not None else None,
    }
    config.emit(FANOUT_MEMBER_ENDED, source, ended)
    if config.budget is not None:
        config.budget.charge(float(report.metrics.get("cost") or 0.0))
    return _unpaused(report, member)


def _unpaused(report: Report, member: str) -> Report:
    if report.status != "paused":
        return report
    kind = report.pending_action.type if report.pending_action else "input"
    error = (
        f"member {member!r} paused waiting for {kind} in its own run {report.run_id}; a"
        " fanned-out member cannot pause its parent (resume that run on its own, or run"
        " the members in-process)"
    )
    return report.model_copy(update={"status": "failed", "errors": [*report.errors, error]})


# -- where a member is: a path below a runner registered on the desk ---------------------------


def _parts(node: Any) -> list[Any]:
    """The runners and workflow nodes directly below ``node``, in a fixed order."""
    from deskwork.workflow._flow import Flow
    from deskwork.workflow._nodes import Node, Step
    from deskwork.workforce._workforce import Workforce

    if isinstance(node, Workforce):
        return list(node.workers)
    if isinstance(node, Flow):
        return list(node.steps)
    if isinstance(node, Step):
        return [node.runner]
    if isinstance(node, Node):
        branches = getattr(node, "branches", None)
        if isinstance(branches, Mapping):
            return [child for nodes in branches.values() for child in nodes]
        return list(getattr(node, "steps", ()))
    return []


def _path_to(node: Any, target: Any) -> list[int] | None:
    if node is target:
        return []
    for index, part in enumerate(_parts(node)):
        path = _path_to(part, target)
        if path is not None:
            return [index, *path]
    return None


def _locate(desk: Desk, member: Runner) -> tuple[Runner, list[int]]:
    for root in desk.registered_runners():
        path = _path_to(root, member)
        if path is not None:
            return root, path
    raise ConfigurationError(
        f"{member.runner_type} {member.name!r} cannot run as a child run: it is not part"
        " of a runner registered on the desk (desk.register(...) the workforce or flow)"
    )


def member_of(root: Runner | None, request: dict[str, Any]) -> Runner | None:
    """The runner a durable run's ``request`` runs: ``root`` itself, or for a fanned-out
    child the member at its path below ``root`` (``None`` when ``root`` is).

    Raises:
        ConfigurationError: the path leads elsewhere (the code differs between processes).
    """
    where = request.get(MEMBER_KEY)
    if where is None or root is None:
        return root
    node: Any = root
    for index in where["path"]:
        parts = _parts(node)
        node = parts[index] if 0 <= index < len(parts) else None
    if (getattr(node, "runner_type", None), getattr(node, "name", None)) != (
        where["runner_type"],
        where["name"],
    ):
        raise ConfigurationError(
            f"{root.runner_type} {root.name!r} has no member {where['name']!r} at"
            f" {where['path']}: the code differs from the process that started the run"
        )
    member: Runner = node
    return member


def parent_link(request: dict[str, Any]) -> dict[str, Any]:
    """What a child run's ``run.started`` event adds: ``{"parent_run_id": ...}``."""
    where = request.get(MEMBER_KEY)
    return {} if where is None else {"parent_run_id": where["parent_run_id"]}
