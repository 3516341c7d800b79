"""The meeting's agents, as rows a host would load from its database.

Each prompt starts with "You are the meeting's <role>" (the offline model tells them apart
by it). Prompts are Jinja2 templates over the shared blackboard.
"""

from __future__ import annotations

from typing import Any

AGENT_CONFIGS: list[dict[str, Any]] = [
    {
        "id": "action-tracker",
        "name": "Action item tracker",
        "text": "You are the meeting's action item tracker. When the latest line commits"
        " someone to a task, record it: a fact of type action_item (key 'owner: task',"
        " value {owner, task, due}), a queue push to action_items, and an event"
        " action_item_added with the same value. Otherwise set has_insight to false.",
        "trigger_config": {"mode": "turn_based", "cooldown": 0},
        "model_config": {"context_turns": 1},
        "priority": 5,
        "include_context": False,
    },
    {
        "id": "decision-logger",
        "name": "Decision logger",
        "text": "You are the meeting's decision logger. A keyword says a decision was just"
        " made: record it as a fact of type decision and set the variable last_decision.",
        "trigger_config": {
            "mode": "keyword",
            "cooldown": 0,
            "keywords": ["we agreed", "decided", "let's go with"],
        },
        "model_config": {"context_turns": 2},
        "priority": 3,
        "include_context": False,
    },
    {
        "id": "owner-check",
        "name": "Due date checker",
        "text": "You are the meeting's due date checker. An action item was just added. If"
        " it has no due date, warn the facilitator to ask its owner for one; otherwise set"
        " has_insight to false.\n"
        "{% for event in blackboard.events %}{% if event.name == 'action_item_added' %}"
        "New action item: {{ event.payload | tojson }}\n{% endif %}{% endfor %}",
        "trigger_config": {
            "mode": "event",
            "cooldown": 0,
            "subscribed_events": ["action_item_added"],
        },
        "include_context": False,
    },
    {
        "id": "facilitator",
        "name": "Facilitator",
        "text": "You are the meeting's facilitator. The room has gone quiet. Suggest ONE"
        " short way to move on, based on the last lines.",
        "trigger_config": {"mode": "silence", "cooldown": 0, "silence_threshold": 10},
        "model_config": {"context_turns": 3},
        "include_context": False,
    },
    {
        "id": "recap",
        "name": "Recap",
        "text": "You are the meeting's recap writer. Write a one-line recap of the meeting"
        " so far into the variable summary, from these facts:\n"
        "{% for fact in blackboard.facts %}- {{ fact.type }}: {{ fact.key }}\n{% endfor %}",
        "trigger_config": {"mode": "interval", "cooldown": 0, "trigger_interval": 60},
        "include_context": False,
    },
]
