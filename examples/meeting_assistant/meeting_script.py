"""The offline model: reads each agent's prompt and answers as a careful model would.

One :class:`~deskwork.testing.ScriptedAdapter` plays every agent; it tells them apart by
the prompt's first words ("You are the meeting's ...") and reads the conversation and the
trigger from the request, so its answers always match the transcript it was given.
"""

from __future__ import annotations

import json
import re
from typing import Any

from deskwork.testing import ScriptedAdapter, Turn, reply

Messages = list[dict[str, Any]]
_COMMITMENT = re.compile(r"\bI'll (?P<task>.+?)(?: by (?P<due>[^.]+))?\.?$")
_ROLE = re.compile(r"You are the meeting's ([a-z ]+?)\.")


def _parts(messages: Messages) -> tuple[str, list[tuple[str, str]], str]:
    """The agent's role, the conversation lines ``(speaker, text)``, the trigger line."""
    system = next(str(m["content"]) for m in messages if m["role"] == "system")
    user = next(str(m["content"]) for m in messages if m["role"] == "user")
    found = _ROLE.search(system)
    role = found[1] if found else ""
    lines: list[tuple[str, str]] = []
    trigger = ""
    section = ""
    for raw in user.splitlines():
        if raw.startswith("## "):
            section = raw[3:].strip().lower()
        elif section == "recent conversation" and ": " in raw:
            speaker, text = raw.split(": ", 1)
            lines.append((speaker, text))
        elif section == "trigger" and raw.strip():
            trigger = raw.strip()
    return role, lines, trigger


def _json(**reply_fields: Any) -> Turn:
    return reply(json.dumps({"has_insight": False, **reply_fields}))


def _action_item(lines: list[tuple[str, str]]) -> Turn:
    speaker, text = lines[-1]
    match = _COMMITMENT.search(text)
    if match is None:
        return _json()
    item = {"owner": speaker, "task": match["task"], "due": match["due"]}
    due = f" (due {item['due']})" if item["due"] else ""
    return _json(
        has_insight=True,
        type="fact",
        content=f"Action item: {speaker} will {item['task']}{due}",
        facts=[{"type": "action_item", "key": f"{speaker}: {item['task']}", "value": item}],
        queue_pushes={"action_items": [item]},
        events=[{"name": "action_item_added", "payload": item}],
    )


def _decision(lines: list[tuple[str, str]]) -> Turn:
    speaker, text = lines[-1]
    decision = re.sub(r"^(good\.\s*)?(so\s+)?", "", text, flags=re.I).rstrip(".")
    return _json(
        has_insight=True,
        type="fact",
        content=f"Decision: {decision}",
        facts=[{"type": "decision", "key": decision, "value": {"by": speaker}}],
        variable_updates={"last_decision": decision},
    )


def _due_date(messages: Messages) -> Turn:
    system = next(str(m["content"]) for m in messages if m["role"] == "system")
    items = [json.loads(raw) for raw in re.findall(r"^New action item: (.+)$", system, re.M)]
    undated = [item for item in items if not item.get("due")]
    if not undated:
        return _json()
    item = undated[-1]
    return _json(
        has_insight=True,
        type="warning",
        content=f"“{item['task']}” has no due date: ask {item['owner']} for one.",
    )


def _facilitate(lines: list[tuple[str, str]]) -> Turn:
    question = next((text for _, text in reversed(lines) if text.endswith("?")), None)
    if question:
        advice = f"Nobody has answered “{question}” yet; ask someone by name."
    else:
        advice = "Sum up what was said and move to the next topic."
    return _json(has_insight=True, type="suggestion", content=advice)


def _recap(messages: Messages) -> Turn:
    system = next(str(m["content"]) for m in messages if m["role"] == "system")
    facts = re.findall(r"^- (decision|action_item): (.+)$", system, flags=re.M)
    decisions = [key for kind, key in facts if kind == "decision"]
    actions = [key for kind, key in facts if kind == "action_item"]
    summary = (
        f"{len(decisions)} decision(s): {'; '.join(decisions) or 'none'}."
        f" {len(actions)} action item(s): {'; '.join(actions) or 'none'}."
    )
    return _json(
        has_insight=True,
        type="fact",
        content=f"Recap: {summary}",
        variable_updates={"summary": summary},
    )


def answer(messages: Messages, tools: Any) -> Turn:
    """The reply of whichever agent is asking."""
    role, lines, _trigger = _parts(messages)
    if role == "action item tracker":
        return _action_item(lines)
    if role == "decision logger":
        return _decision(lines)
    if role == "due date checker":
        return _due_date(messages)
    if role == "facilitator":
        return _facilitate(lines)
    if role == "recap writer":
        return _recap(messages)
    return _json()


def scripted_model() -> ScriptedAdapter:
    """A model that plays every agent of the meeting."""
    return ScriptedAdapter(default=answer)
