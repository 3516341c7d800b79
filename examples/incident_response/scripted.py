"""An offline stand-in for the LLM: a scripted on-call engineer.

It reads each ReAct prompt the agents send (core prompt, loaded knowledge, previous steps) and
answers in the same ``<thought>``/``<action>`` format a real model is asked for, so the example
runs the real loop, the real knowledge loading and the real routing without a provider::

    adapter = ScriptedAdapter(default=oncall_turn)   # deskwork.testing

What it answers depends only on the prompt (no hidden state), so one instance serves any number
of incidents, concurrently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from deskwork.testing import ScriptedAdapter

__all__ = ["SCRIPTED_MODEL", "oncall_turn", "scripted_adapter"]

SCRIPTED_MODEL = "scripted/oncall"
"""The model name the offline desk runs with (it shows up in the ``llm.completed`` events)."""


def scripted_adapter() -> ScriptedAdapter:
    """A deskwork model adapter that answers every call with :func:`oncall_turn`."""
    return ScriptedAdapter(default=oncall_turn)


def oncall_turn(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """The reply to one model call: a thought and one action, in the ReAct XML format."""
    system = _text(messages[0]) if messages else ""
    prompt = _text(messages[-1]) if messages else ""
    found = re.search(r"You are the (\w+) agent", system)
    agent = _AGENTS.get(found.group(1) if found else "")
    if agent is None:
        return "I only know how to work on incidents."
    return agent(system, prompt)


def _supervisor(system: str, prompt: str) -> str:
    if "Loaded knowledge:" not in prompt:
        return _act(
            "Before routing I check the escalation policy and the routing rules.",
            "request_slot",
            {"slot": "escalation_policy"},
        )
    alert = _between(prompt, "User input:\n", "\n\nLoaded knowledge:")
    if alert.strip().upper().startswith("RESOLVED"):
        summary = "The alert is already resolved; closing it without action."
        return _act(summary, "decide", {"next_agent": "", "content": summary})
    earlier = _line(system, "Earlier incidents of this team:")
    summary = "New alert: the monitor classifies it first."
    if "incident:" in earlier:
        summary = "Recurring alert (seen before for this team): the monitor classifies it first."
    return _act(summary, "decide", {"next_agent": "monitor", "content": summary})


def _diagnostician(system: str, prompt: str) -> str:
    category = _line(system, "Category:") or "infrastructure"
    service = _line(system, "Service:") or "unknown"
    if "Loaded knowledge:" not in prompt:
        slot = category if f"- {category}:" in system else "infrastructure"
        return _act(f"Category {category}: I load its runbook.", "request_slot", {"slot": slot})
    root_cause = _line(prompt, "Root cause:").replace("{service}", service) or "unknown"
    action = _line(prompt, "Recommended action:") or "escalate"
    return _act(
        f"The runbook points to: {root_cause}.",
        "diagnose",
        {"root_cause": root_cause, "recommended_action": action, "confidence": 0.85},
    )


def _remediator(system: str, prompt: str) -> str:
    action = _line(system, "Recommended action:") or "escalate"
    if "Loaded knowledge:" not in prompt:
        slot = action if f"- {action}:" in system else "escalate"
        return _act(f"I load the {slot} playbook.", "request_slot", {"slot": slot})
    if "Action: execute_playbook" not in prompt:
        knowledge = _between(prompt, "Loaded knowledge:", "\n\nPrevious steps:")
        steps = re.findall(r"^\d+\.\s+(.+)$", knowledge, flags=re.MULTILINE)
        return _act("I run the playbook's steps in order.", "execute_playbook", {"steps": steps})
    status = "escalated" if action == "escalate" else "completed"
    return _act("Every step succeeded.", "complete", {"status": status})


_AGENTS: dict[str, Callable[[str, str], str]] = {
    "supervisor": _supervisor,
    "diagnostician": _diagnostician,
    "remediator": _remediator,
}


def _act(thought: str, action: str, params: dict[str, Any]) -> str:
    return f'<thought>{thought}</thought>\n<action type="{action}">{json.dumps(params)}</action>'


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _line(text: str, label: str) -> str:
    """What follows ``label`` on its line ("" if no line has it)."""
    found = re.search(rf"^{re.escape(label)}[ \t]*(.*)$", text, flags=re.MULTILINE)
    return found.group(1).strip() if found else ""


def _between(text: str, start: str, end: str) -> str:
    head = text.split(start, 1)[-1]
    return head.split(end, 1)[0]
