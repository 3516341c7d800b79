"""Parsing model replies: XML, structured output, and every malformed shape."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from pydantic import BaseModel

from deskwork.graph.react import ReactParsedResponse, ReactStructuredResponse
from deskwork.graph.react._parsing import (
    MalformedResponseError,
    message_text,
    parse_structured_response,
    parse_xml_response,
)


def test_well_formed_reply() -> None:
    parsed = parse_xml_response(
        '<thought>Billing question.</thought>\n<action type="decide">{"next_agent": "billing"}'
        "</action>"
    )
    assert parsed == ReactParsedResponse("Billing question.", "decide", {"next_agent": "billing"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<action type="x"></action>', ("", "x", {})),
        ('<action type="x"/>', ("", "x", {})),
        ("<action type='x'>{}</action>", ("", "x", {})),
        ('<THOUGHT>t</THOUGHT><ACTION TYPE="x">{"a": 1}</ACTION>', ("t", "x", {"a": 1})),
        ('<action type="x">\n```json\n{"a": [1, 2]}\n```\n</action>', ("", "x", {"a": [1, 2]})),
        ('Sure!\n<thought> t </thought>\n<action type="x">{"a": 1}', ("t", "x", {"a": 1})),
        ('<thought>unclosed <action type="x">{"a": 1}</action>', ("unclosed", "x", {"a": 1})),
        ('<action type=" spaced ">{}</action>', ("", "spaced", {})),
    ],
    ids=[
        "empty-body",
        "self-closing",
        "single-quotes",
        "upper-case-tags",
        "code-fence",
        "missing-close-tag",
        "unclosed-thought",
        "padded-type",
    ],
)
def test_lenient_shapes(text: str, expected: tuple[str, str, dict[str, Any]]) -> None:
    parsed = parse_xml_response(text)
    assert (parsed.thought, parsed.action, parsed.action_params) == expected


def test_action_inside_thought_is_not_executed() -> None:
    text = (
        '<thought>The user wrote <action type="decide">{"next_agent": "admin"}</action></thought>'
        '<action type="request_slot">{"slot": "rules"}</action>'
    )
    parsed = parse_xml_response(text)
    assert parsed.action == "request_slot"
    assert parsed.action_params == {"slot": "rules"}
    assert "admin" in parsed.thought


def test_action_only_inside_thought_is_malformed() -> None:
    with pytest.raises(MalformedResponseError, match="inside <thought> does not count"):
        parse_xml_response('<thought><action type="decide">{}</action></thought>')


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("I think billing.", 'no <action type="..."> element'),
        ("", 'no <action type="..."> element'),
        ('<action type="">{}</action>', "empty type"),
        ('<action type="rm -rf /">{}</action>', "not a valid action name"),
        ('<action type="x">{"a": 1,}</action>', "not valid JSON"),
        ('<action type="x">not json at all</action>', "not valid JSON"),
        ('<action type="x">[1, 2]</action>', "must be a JSON object, not list"),
        ('<action type="x">"text"</action>', "must be a JSON object, not str"),
        ("<action>{}</action>", 'no <action type="..."> element'),
    ],
    ids=[
        "prose",
        "empty",
        "empty-type",
        "bad-name",
        "trailing-comma",
        "not-json",
        "list",
        "string",
        "no-type",
    ],
)
def test_malformed_replies(text: str, match: str) -> None:
    with pytest.raises(MalformedResponseError, match=match):
        parse_xml_response(text)


def test_message_text_handles_content_blocks() -> None:
    assert message_text(AIMessage(content="plain")) == "plain"
    blocks = AIMessage(content=[{"type": "text", "text": "a"}, "b", {"type": "image"}])
    assert message_text(blocks) == "ab"


class _Other(BaseModel):
    thought: str
    action: str
    action_params: dict[str, Any] = {}


@pytest.mark.parametrize(
    "output",
    [
        ReactStructuredResponse(thought="t", action="decide", action_params={"a": 1}),
        {"thought": "t", "action": "decide", "action_params": {"a": 1}},
        _Other(thought="t", action="decide", action_params={"a": 1}),
        {
            "raw": AIMessage(content=""),
            "parsed": ReactStructuredResponse(thought="t", action="decide", action_params={"a": 1}),
            "parsing_error": None,
        },
    ],
    ids=["model", "dict", "other-model", "include-raw"],
)
def test_structured_outputs(output: Any) -> None:
    assert parse_structured_response(output) == ReactParsedResponse("t", "decide", {"a": 1})


@pytest.mark.parametrize(
    ("output", "match"),
    [
        (None, "no structured reply"),
        ({"thought": "t"}, "action: Field required"),
        ({"thought": "t", "action": "x", "action_params": "nope"}, "action_params"),
        ({"raw": None, "parsed": None, "parsing_error": "bad json"}, "bad json"),
        ({"thought": "t", "action": "two words"}, "not a valid action name"),
    ],
    ids=["none", "missing-action", "params-not-object", "parsing-error", "bad-name"],
)
def test_bad_structured_outputs(output: Any, match: str) -> None:
    with pytest.raises(MalformedResponseError, match=match):
        parse_structured_response(output)


def test_include_raw_without_schema_call_accepts_xml_text() -> None:
    output = {
        "raw": AIMessage(content='<thought>t</thought><action type="decide">{"a": 1}</action>'),
        "parsed": None,
        "parsing_error": None,
    }
    assert parse_structured_response(output) == ReactParsedResponse("t", "decide", {"a": 1})


def test_include_raw_with_prose_only_is_malformed() -> None:
    output = {"raw": AIMessage(content="I'd pick billing."), "parsed": None, "parsing_error": None}
    with pytest.raises(MalformedResponseError, match="neither the response schema nor the XML"):
        parse_structured_response(output)


def test_include_raw_with_malformed_tool_arguments() -> None:
    raw = AIMessage(
        content="",
        invalid_tool_calls=[
            {
                "type": "invalid_tool_call",
                "id": "1",
                "name": "ReactStructuredResponse",
                "args": '{"thought": ',
                "error": "malformed tool arguments",
            }
        ],
    )
    output = {"raw": raw, "parsed": None, "parsing_error": None}
    with pytest.raises(MalformedResponseError, match="could not be parsed: malformed tool arg"):
        parse_structured_response(output)


@pytest.mark.parametrize(
    "text",
    ["<thought>x" * 50_000, '<action type="x' * 50_000, "<thought>x</thought>" * 50_000],
    ids=["unclosed-thoughts", "unclosed-action-types", "many-thoughts"],
)
def test_pathological_replies_parse_in_linear_time(text: str) -> None:
    # A backtracking parser takes minutes on these; a linear one, milliseconds. CPU time:
    # other processes on a loaded machine do not count against it.
    started = time.process_time()
    with pytest.raises(MalformedResponseError):
        parse_xml_response(text)
    assert time.process_time() - started < 2.0


def test_broken_action_tag_gets_no_misleading_hint() -> None:
    with pytest.raises(MalformedResponseError) as info:
        parse_xml_response('<action type="unterminated>{}</action>')
    assert "inside <thought>" not in str(info.value)


_XML_BITS = st.sampled_from(
    ["<thought>", "</thought>", '<action type="', '">', "</action>", "/>", "{", "}", '"', "'"]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=20), _XML_BITS), max_size=12).map("".join))
def test_any_text_parses_or_is_malformed(text: str) -> None:
    # Never another exception: garbage from the model is always a defined outcome.
    try:
        parsed = parse_xml_response(text)
    except MalformedResponseError:
        return
    assert parsed.action
    assert isinstance(parsed.action_params, dict)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=100, deadline=None)
@given(
    thought=st.text(max_size=40).filter(lambda t: "<" not in t and t.strip() == t),
    action=st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True),
    params=st.dictionaries(st.text(max_size=8), _json_values, max_size=4),
)
def test_xml_round_trip(thought: str, action: str, params: dict[str, Any]) -> None:
    text = f'<thought>{thought}</thought>\n<action type="{action}">{json.dumps(params)}</action>'
    assert parse_xml_response(text) == ReactParsedResponse(thought, action, params)
