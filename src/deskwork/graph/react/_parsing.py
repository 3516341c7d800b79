"""Turning a model reply into a :class:`ReactParsedResponse`.

XML replies look like::

    <thought>The user asks about billing.</thought>
    <action type="decide">{"next_agent": "billing"}</action>

``<thought>`` blocks are removed before the action is searched for, so an ``<action>`` written
inside a thought is never executed. Anything unusable raises :class:`MalformedResponseError`, whose
message is written to be shown back to the model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from deskwork.graph.react.models import ReactParsedResponse, ReactStructuredResponse

__all__ = [
    "MalformedResponseError",
    "message_text",
    "parse_structured_response",
    "parse_xml_response",
]

_OPEN_THOUGHT = re.compile(r"<thought\s*>", re.I)
_CLOSE_THOUGHT = re.compile(r"</thought\s*>", re.I)
_ACTION_OPEN = re.compile(
    r"<action\s+type\s*=\s*(?P<q>[\"'])(?P<type>[^\"'<>\r\n]{0,200})(?P=q)\s*(?P<end>/?)>", re.I
)
_ACTION_CLOSE = re.compile(r"</action\s*>", re.I)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*(.*?)\s*```$", re.S)
_ACTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,127}")


class MalformedResponseError(ValueError):
    """The model's reply cannot be turned into an action."""


def message_text(message: Any) -> str:
    """The text of a chat model reply (``str`` content or a list of content blocks)."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "".join(parts)
    return str(content)


def _split_thought(text: str) -> tuple[str, str]:
    """``(thought, text without any thought block)``, in one left-to-right scan."""
    thoughts: list[str] = []
    rest: list[str] = []
    pos = 0
    while (opening := _OPEN_THOUGHT.search(text, pos)) is not None:
        rest.append(text[pos : opening.start()])
        closing = _CLOSE_THOUGHT.search(text, opening.end())
        if closing is None:  # "<thought>... <action ...>": the thought runs up to the action
            action = _ACTION_OPEN.search(text, opening.end())
            cut = action.start() if action else len(text)
            thoughts.append(text[opening.end() : cut].strip())
            pos = cut
            break
        thoughts.append(text[opening.end() : closing.start()].strip())
        pos = closing.end()
    rest.append(text[pos:])
    return "\n".join(t for t in thoughts if t), " ".join(rest)


def _parse_params(body: str, action: str) -> dict[str, Any]:
    body = body.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body:
        return {}
    try:
        params = json.loads(body)
    except json.JSONDecodeError as exc:
        raise MalformedResponseError(
            f"the parameters of action {action!r} are not valid JSON ({exc.msg} at "
            f"line {exc.lineno} column {exc.colno}); write them as one JSON object"
        ) from None
    if not isinstance(params, dict):
        raise MalformedResponseError(
            f"the parameters of action {action!r} must be a JSON object, "
            f"not {type(params).__name__}"
        )
    return params


def _check_action_name(action: str) -> str:
    action = action.strip()
    if not action:
        raise MalformedResponseError("the <action> element has an empty type")
    if not _ACTION_NAME.fullmatch(action):
        raise MalformedResponseError(f"{action[:80]!r} is not a valid action name")
    return action


def parse_xml_response(text: str) -> ReactParsedResponse:
    """Parse ``<thought>...</thought><action type="...">{json}</action>``.

    Raises:
        MalformedResponseError: No ``<action type="...">`` outside the thought, an invalid
            action name, or parameters that are not a JSON object.
    """
    thought, rest = _split_thought(text)
    opening = _ACTION_OPEN.search(rest)
    if opening is None:
        inside = _ACTION_OPEN.search(text) is not None
        hint = " (an <action> inside <thought> does not count)" if inside else ""
        raise MalformedResponseError(f'the reply has no <action type="..."> element{hint}')
    action = _check_action_name(opening.group("type"))
    if opening.group("end"):  # <action type="x"/>
        return ReactParsedResponse(thought, action, {})
    after = rest[opening.end() :]
    closing = _ACTION_CLOSE.search(after)
    body = after[: closing.start()] if closing else after
    return ReactParsedResponse(thought, action, _parse_params(body, action))


def _unparsed_structured(output: dict[str, Any]) -> ReactParsedResponse:
    """An ``include_raw`` reply without a parsed object: accept XML in its text, if any."""
    error = output.get("parsing_error")
    text = message_text(output["raw"]) if output["raw"] is not None else ""
    if text.strip() and error is None:
        try:
            return parse_xml_response(text)
        except MalformedResponseError as exc:
            raise MalformedResponseError(
                f"the reply used neither the response schema nor the XML format ({exc})"
            ) from None
    invalid = getattr(output["raw"], "invalid_tool_calls", None) or []
    if error is None and invalid:
        error = invalid[0].get("error") or "malformed arguments"
    if error is not None:
        raise MalformedResponseError(f"the structured reply could not be parsed: {error}")
    raise MalformedResponseError("the model returned no structured reply")


def parse_structured_response(output: Any) -> ReactParsedResponse:
    """Accept what ``llm.with_structured_output(ReactStructuredResponse)`` returned.

    That is a :class:`ReactStructuredResponse`, another model or a ``dict`` with the same
    fields, or an ``include_raw`` dict (``{"raw": ..., "parsed": ...}``).

    Raises:
        MalformedResponseError: Nothing usable came back, or it fails the schema.
    """
    if isinstance(output, dict) and "parsed" in output and "raw" in output:
        if output["parsed"] is None:
            return _unparsed_structured(output)
        output = output["parsed"]
    if output is None:
        raise MalformedResponseError("the model returned no structured reply")
    if isinstance(output, BaseModel) and not isinstance(output, ReactStructuredResponse):
        output = output.model_dump()
    try:
        response = ReactStructuredResponse.model_validate(output)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}" for e in exc.errors()
        )
        raise MalformedResponseError(f"the structured reply is invalid: {problems}") from None
    parsed = response.to_parsed()
    action = _check_action_name(parsed.action)
    return ReactParsedResponse(parsed.thought, action, parsed.action_params)
