"""What a person's answer to a ``user_input`` pause must look like, and the check of an answer.

The pause stores a JSON schema (:attr:`PendingAction.answer_schema`), so any process can refuse
an answer of the wrong type before it claims the pause, without the tool at hand. The check is
never stricter than the tool's own Pydantic validation in lax mode, which runs after it: a
numeric or boolean text (``"42"``, ``"yes"``) passes where Pydantic would convert it, and the
schema's regular expressions are not run (an answer from HTTP could make Python's backtracking
engine take exponential time; Pydantic's own engine does not). Whatever passes here is still
validated by the tool when it is called.
"""

from __future__ import annotations

import math
from typing import Any

from deskwork.tools.base import Tool, output_adapter
from deskwork.utils import to_jsonable

__all__ = ["answer_problems", "answer_schema"]

_MAX_PROBLEMS = 5
_BOOL_WORDS = frozenset({"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"})


def answer_schema(tool: Tool) -> dict[str, Any] | None:
    """The JSON schema of ``tool``'s input-key parameter, or of its ``output_type`` when the
    tool has no such parameter (the answer is then the call's result); ``None`` when any
    answer goes (neither, or a type without a JSON schema)."""
    try:
        key = tool.effective_input_key
        if key not in tool.input_model.model_fields:
            if tool.output_type is None:
                return None
            schema: dict[str, Any] = output_adapter(tool.output_type).json_schema()
            return schema
        full = tool.input_model.model_json_schema()
        field = tool.input_model.model_fields[key]
        found = full.get("properties", {}).get(field.alias or key)
    except Exception:  # a type Pydantic validates but has no JSON schema for
        return None
    if not isinstance(found, dict):
        return None
    return {**found, "$defs": full["$defs"]} if "$defs" in full else found


def answer_problems(schema: dict[str, Any], answer: Any) -> list[str]:
    """Where ``answer`` does not fit ``schema`` (at most five places; ``[]`` when it fits, or
    when the schema cannot be read: the tool decides then)."""
    from jsonschema.validators import extend, validator_for
    from referencing import Registry  # jsonschema's own dependency

    from deskwork.tools.mcp import _without_regex  # the one rule of regex-free checks

    found: list[Any] = []
    try:
        base = _without_regex(validator_for(schema), schema)
        lax = extend(base, type_checker=base.TYPE_CHECKER.redefine_many(_LAX_TYPES))
        errors = lax(schema, registry=Registry()).iter_errors(to_jsonable(answer))
        for error in errors:  # a keyword that meets a numeric text (minimum: "5" < 1) raises
            found.append(error)
            if len(found) == _MAX_PROBLEMS:
                break
    except Exception:
        pass
    return [f"{'.'.join(str(p) for p in e.absolute_path) or 'answer'}: {e.message}" for e in found]


def _number_text(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _is_number(_checker: Any, value: Any) -> bool:
    return isinstance(value, int | float) or _number_text(value) is not None


def _is_integer(_checker: Any, value: Any) -> bool:
    if isinstance(value, int):
        return True
    number = value if isinstance(value, float) else _number_text(value)
    return number is not None and math.isfinite(number) and number.is_integer()


def _is_boolean(_checker: Any, value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in _BOOL_WORDS
    return isinstance(value, bool) or (isinstance(value, int | float) and value in (0, 1))


def _is_array(_checker: Any, value: Any) -> bool:
    return isinstance(value, list | tuple)


_LAX_TYPES = {"number": _is_number, "integer": _is_integer, "boolean": _is_boolean,
              "array": _is_array}  # fmt: skip
"""JSON types read as Pydantic's lax mode reads them (a text it converts passes)."""
