"""The offline model: what each team member would say, turn by turn.

One :class:`~deskwork.testing.ScriptedAdapter` plays every member. It tells them apart by the
system message ("You are the coder..."), so the reviewer and the narrator can run in
parallel. Replies that report results read them from the conversation (the real test
output, the real changed files), so the script stays truthful when the project changes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from coding_team import ROLES, ReviewReport

from deskwork.testing import ScriptedAdapter, Turn, call_tool, call_tools, reply, structured

Messages = list[dict[str, Any]]
ScriptTurn = Turn | Callable[[Messages], Turn]

BUGGY = "return round(price - price * percent, 2)"
FIXED = "return round(price - price * percent / 100, 2)"
NOTE = "percent is 0-100, so divide it by 100 before applying it"
RECORD = {"file": "pricing.py", "function": "apply_discount", "change": "percent -> percent / 100"}
MESSAGE = "Fixed the discount maths in pricing.py; please review."


def _role(messages: Messages) -> str:
    system = " ".join(str(m.get("content")) for m in messages if m.get("role") == "system")
    for role in ROLES:
        if f"You are the {role}" in system:
            return role
    raise LookupError("the scripted model does not know this worker")


def _last_tool_result(messages: Messages, needle: str) -> str:
    for message in reversed(messages):
        if message.get("role") == "tool" and needle in str(message.get("content")):
            return str(message["content"])
    return ""


def _job_input(messages: Messages) -> dict[str, Any]:
    first_user = next(m for m in messages if m.get("role") == "user")
    data: dict[str, Any] = json.loads(str(first_user["content"]))
    return data


def _coder_done(messages: Messages) -> Turn:
    tests = _last_tool_result(messages, '"summary"')
    summary = json.loads(tests)["summary"] if tests else "not run"
    return reply(
        "Fixed apply_discount in pricing.py: it subtracted price * percent instead of"
        f" price * percent / 100. Tests after the fix: {summary}."
    )


def _review(messages: Messages) -> Turn:
    job = _job_input(messages)
    files = list(job["changed_files"])
    passed = bool(job["tests_after"]["passed"])
    return structured(
        ReviewReport(
            verdict="approve" if passed and files else "request_changes",
            changed_files=files,
            tests_passed=passed,
            summary="apply_discount now divides the percent by 100; "
            + ", ".join(files) + f" changed; tests: {job['tests_after']['summary']}.",
            risks=["order_total relies on apply_discount; no test covers a 100% discount"],
        )
    )  # fmt: skip


def _narrate(messages: Messages) -> Turn:
    job = _job_input(messages)
    before, after = job["tests_before"], job["tests_after"]
    return reply(
        f"The discount was applied as a whole number instead of a percentage, so tests"
        f" failed ({before['summary']}). The coder changed {', '.join(job['changed_files'])}"
        f" to divide by 100. The tests pass now ({after['summary']})."
        if after["passed"]
        else f"The fix did not make the tests pass ({after['summary']})."
    )


def scripts() -> dict[str, list[ScriptTurn]]:
    """Each member's turns, in order."""
    return {
        "manager": [structured({"worker": "coder"})],
        "coder": [
            call_tools(("list_files", {}), ("run_tests", {})),
            call_tool("search_docs", query="discount percent price"),
            call_tool("read_file", path="pricing.py"),
            call_tool("replace_in_file", path="pricing.py", old=BUGGY, new=FIXED),
            call_tool("run_tests"),
            call_tools(
                ("remember", {"key": "fix:apply_discount", "note": NOTE}),
                ("blackboard_write", {"key": "fix", "value": RECORD}),
                ("channel_send", {"recipient": "reviewer", "content": MESSAGE}),
            ),
            _coder_done,
        ],
        "reviewer": [
            call_tools(
                ("channel_receive", {}),
                ("blackboard_read", {"key": "fix"}),
                ("recall", {"query": "discount percent decision"}),
            ),
            reply("The change is one line in apply_discount and matches the coder's note."),
            _review,  # tools plus a response schema: the structured answer is a last call
        ],
        "narrator": [_narrate],
    }


def scripted_model() -> ScriptedAdapter:
    """A model that plays the whole team."""
    queues = scripts()

    def next_turn(messages: Messages, tools: Any) -> Turn:
        queue = queues[_role(messages)]
        if not queue:
            raise LookupError(f"the {_role(messages)}'s script is over")
        turn = queue.pop(0)
        return turn if isinstance(turn, Turn) else turn(messages)

    return ScriptedAdapter(default=next_turn)
