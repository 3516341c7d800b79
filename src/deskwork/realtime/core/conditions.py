"""Trigger conditions: blackboard-aware preconditions checked before an agent runs.

A condition block is ``{"mode": "all" | "any", "rules": [rule, ...]}``; a rule names one
source and an operator::

    {"var": "phase", "op": "in", "value": ["negotiation", "closing"]}
    {"queue": "pending_questions", "op": "not_empty"}
    {"fact": "budget", "op": "exists"}
    {"memory": "objection_count", "op": "gte", "value": 3}     # own memory
    {"memory": "other_agent.flag", "op": "eq", "value": true}  # another agent's memory
    {"meta": "turn_count", "op": "mod", "value": 5, "result": 0}

Rules are validated when the agent is configured: an unknown operator or source, a missing
``value``, or a value of the wrong shape (``in`` with a string, ``mod`` by 0) is a problem.
Strict loading raises :class:`AgentConfigurationError` (a ``ConfigurationError``); lenient
loading (``parse(raw, log=...)``) warns and keeps the broken rule as one that evaluates false
(a broken block, such as an unknown ``mode``, makes the whole condition false).
Evaluation never raises:

- A rule on a missing key is false, except ``not_exists`` and ``empty`` (which are true).
- A type mismatch (``"a" > 3``) is false; a number and a numeric text (``5 >= "3"``, a
  value a database kept as text) compare as numbers in ``gt``/``gte``/``lt``/``lte`` and
  ``mod``.
- ``exists`` tests truthiness; ``present`` tests presence only (``0`` and ``""`` pass).
- For a queue, a numeric comparison (``gt``, ``eq`` ... with a number) compares its length.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from deskwork.realtime.core._problems import AgentConfigurationError, ProblemLog
from deskwork.realtime.core.blackboard import Blackboard
from deskwork.utils import is_number

__all__ = ["ConditionEvaluator", "ConditionRule", "Operator", "TriggerConditions"]

Operator = Literal[
    "eq", "neq", "gt", "gte", "lt", "lte", "in", "not_in", "contains",
    "exists", "present", "not_exists", "not_empty", "empty", "mod",
]  # fmt: skip
Source = Literal["var", "fact", "queue", "memory", "meta"]

OPERATORS: Final[tuple[str, ...]] = get_args(Operator)
SOURCES: Final[tuple[str, ...]] = get_args(Source)
_NEEDS_VALUE: Final = frozenset(
    {"eq", "neq", "gt", "gte", "lt", "lte", "in", "not_in", "contains", "mod"}
)
_ORDERING: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
}


def _check_value(op: str, raw: Mapping[str, Any], where: str) -> None:
    """Validate the ``value`` / ``result`` fields for ``op``."""
    if op in _NEEDS_VALUE and "value" not in raw:
        raise AgentConfigurationError(f"{where}: operator {op!r} needs a 'value'")
    value = raw.get("value")
    for name in ("value", "result"):
        if isinstance(raw.get(name), float) and not math.isfinite(raw[name]):
            raise AgentConfigurationError(
                f"{where}: {name!r} must be a finite number, not {raw[name]!r} (the rule "
                "could never hold)"
            )
    if op in ("in", "not_in") and not isinstance(value, list | tuple):
        raise AgentConfigurationError(f"{where}: operator {op!r} needs a list 'value'")
    if op in _ORDERING and not (is_number(value) or isinstance(value, str)):
        raise AgentConfigurationError(f"{where}: operator {op!r} needs a number or string 'value'")
    if op == "mod" and (not is_number(value) or value == 0):
        raise AgentConfigurationError(f"{where}: operator 'mod' needs a non-zero number 'value'")
    if "result" in raw and (op != "mod" or not is_number(raw["result"])):
        raise AgentConfigurationError(f"{where}: 'result' is only valid as a number with 'mod'")


def _parse_rule(raw: Any, where: str) -> dict[str, Any]:
    """Turn the documented rule shape into ConditionRule fields, or raise ConfigurationError."""
    if not isinstance(raw, Mapping):
        raise AgentConfigurationError(
            f"{where}: a rule must be an object, got {type(raw).__name__}"
        )
    sources = [name for name in SOURCES if name in raw]
    if len(sources) != 1:
        raise AgentConfigurationError(f"{where}: a rule needs exactly one of {', '.join(SOURCES)}")
    source = sources[0]
    key = raw[source]
    if not isinstance(key, str) or not key:
        raise AgentConfigurationError(f"{where}: {source!r} must be a non-empty string")
    unknown = set(raw) - {source, "op", "value", "result"}
    if unknown:
        raise AgentConfigurationError(f"{where}: unknown rule fields {sorted(unknown)}")
    op = raw.get("op", "eq")
    if op not in OPERATORS:
        raise AgentConfigurationError(
            f"{where}: unknown operator {op!r}; expected one of {', '.join(OPERATORS)}"
        )
    if op == "mod":  # a database's numeric text ("5") is the number, as in configs
        raw = {k: _numeric(v) if k in ("value", "result") else v for k, v in raw.items()}
    _check_value(op, raw, where)
    fields = {"source": source, "key": key, "op": op, "value": raw.get("value")}
    if op == "mod":
        fields["result"] = raw.get("result", 0)
    return fields


class ConditionRule(BaseModel):
    """One validated rule. Built from (and dumped to) the documented ``{"var": ...}`` shape."""

    model_config = ConfigDict(frozen=True)

    source: Source
    """Where the value comes from."""
    key: str
    """Variable name, fact type, queue name, memory key (``agent.key`` for another agent's
    memory) or metadata name."""
    op: Operator = "eq"
    """The comparison."""
    value: Any = None
    """The expected value (operators that need one)."""
    result: int | float = 0
    """Expected remainder for ``mod``."""
    invalid: str | None = None
    """Why the rule is broken (lenient loading); a broken rule evaluates false."""
    raw: Any = None
    """The rule as given, kept for broken rules."""

    @model_validator(mode="before")
    @classmethod
    def _from_documented_shape(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "source" not in data:
            return _parse_rule(data, "rule")
        return data

    @model_serializer
    def _to_documented_shape(self) -> Any:
        if self.invalid is not None:
            return self.raw
        out: dict[str, Any] = {self.source: self.key, "op": self.op}
        if self.op in _NEEDS_VALUE:
            out["value"] = self.value
        if self.op == "mod":
            out["result"] = self.result
        return out


class TriggerConditions(BaseModel):
    """A validated condition block: ``mode`` ("all" or "any") over ``rules``."""

    model_config = ConfigDict(frozen=True)

    mode: Literal["all", "any"] = "all"
    """Whether every rule or at least one rule must hold."""
    rules: list[ConditionRule] = Field(default_factory=list)
    """The rules; an empty block always holds."""
    invalid: str | None = Field(default=None, exclude=True)
    """Why the block is broken (lenient loading); a broken block evaluates false."""

    @classmethod
    def parse(
        cls,
        raw: TriggerConditions | Mapping[str, Any] | None,
        *,
        log: ProblemLog | None = None,
        field: str = "trigger_conditions",
    ) -> TriggerConditions | None:
        """Validate a condition block.

        Args:
            raw: The block (or ``None``, or an already validated block).
            log: Lenient loading: record each problem here and keep the broken rule (or
                block) as one that evaluates false. ``None`` (default): strict.
            field: Name of the block in problem messages.

        Raises:
            AgentConfigurationError: strict loading and the block or one of its rules is
                invalid (the message says which rule and why).
        """
        if raw is None or isinstance(raw, TriggerConditions):
            return raw
        try:
            mode, rules = _parse_block(raw, field)
        except AgentConfigurationError as exc:
            if log is None:
                raise
            log.add(field, str(exc).removeprefix(f"{field}: "), "condition evaluates false")
            return cls(invalid=str(exc))
        parsed = []
        for index, rule in enumerate(rules):
            where = f"{field}.rules[{index}]"
            try:
                parsed.append(ConditionRule(**_parse_rule(rule, where)))
            except AgentConfigurationError as exc:
                if log is None:
                    raise
                log.add(where, str(exc).removeprefix(f"{where}: "), "rule evaluates false")
                parsed.append(ConditionRule(source="var", key="?", invalid=str(exc), raw=rule))
        return cls(mode=mode, rules=parsed)

    @model_validator(mode="before")
    @classmethod
    def _validate_raw(cls, data: Any) -> Any:
        rules = data.get("rules") if isinstance(data, Mapping) else None
        if isinstance(rules, list | tuple) and any(
            not isinstance(rule, ConditionRule) for rule in rules
        ):
            parsed = cls.parse(data)
            assert parsed is not None
            return {"mode": parsed.mode, "rules": parsed.rules}
        return data


def _parse_block(raw: Any, field: str) -> tuple[Literal["all", "any"], list[Any]]:
    """The block's mode and raw rules, or raise ``AgentConfigurationError``."""
    if not isinstance(raw, Mapping):
        raise AgentConfigurationError(f"{field} must be an object with mode and rules")
    unknown = set(raw) - {"mode", "rules"}
    if unknown:
        raise AgentConfigurationError(f"{field}: unknown fields {sorted(unknown)}")
    mode = raw.get("mode", "all")
    if mode not in ("all", "any"):
        raise AgentConfigurationError(f"{field}.mode must be 'all' or 'any', not {mode!r}")
    rules = raw.get("rules") or []
    if not isinstance(rules, list | tuple):
        raise AgentConfigurationError(f"{field}.rules must be a list")
    return mode, list(rules)


class ConditionEvaluator:
    """Evaluates trigger conditions against a blackboard and execution metadata."""

    def evaluate(
        self,
        conditions: TriggerConditions | Mapping[str, Any] | None,
        blackboard: Blackboard,
        meta: Mapping[str, Any],
        agent_id: str,
    ) -> bool:
        """Return whether ``conditions`` hold (``None`` or no rules: always true).

        Args:
            conditions: A validated block or its dict form (validated here; an invalid block
                raises ``ConfigurationError``).
            blackboard: The board to read (usually the phase snapshot).
            meta: Execution metadata: ``turn_count``, ``trigger_type``, ``phase``,
                ``session_id`` and the trigger metadata keys.
            agent_id: The agent being checked (whose memory ``{"memory": key}`` reads).

        Raises:
            TypeError: ``blackboard`` is not a ``Blackboard`` or ``meta`` not a mapping.
        """
        if not isinstance(blackboard, Blackboard):
            raise TypeError(
                "ConditionEvaluator.evaluate: blackboard must be a Blackboard, got "
                f"{type(blackboard).__name__} (Blackboard.from_dict builds one from containers)"
            )
        if not isinstance(meta, Mapping):
            raise TypeError(
                f"ConditionEvaluator.evaluate: meta must be a mapping, got {type(meta).__name__}"
            )
        block = TriggerConditions.parse(conditions)
        if block is not None and block.invalid is not None:
            return False
        if block is None or not block.rules:
            return True
        results = (self.evaluate_rule(r, blackboard, meta, agent_id) for r in block.rules)
        return all(results) if block.mode == "all" else any(results)

    def evaluate_rule(
        self, rule: ConditionRule, blackboard: Blackboard, meta: Mapping[str, Any], agent_id: str
    ) -> bool:
        """Evaluate one rule; never raises (a broken rule is false)."""
        if rule.invalid is not None:
            return False
        found, actual = _lookup(rule, blackboard, meta, agent_id)
        try:
            return _compare(rule, found, actual)
        except (TypeError, ValueError, ArithmeticError):
            return False


def _lookup(
    rule: ConditionRule, board: Blackboard, meta: Mapping[str, Any], agent_id: str
) -> tuple[bool, Any]:
    """Return ``(present, value)`` for the rule's source and key."""
    key = rule.key
    if rule.source == "var":
        return board.has_var(key), board.get_var(key)
    if rule.source == "fact":
        fact = board.get_fact(key)
        return fact is not None, None if fact is None else fact.value
    if rule.source == "queue":
        items = board.get_queue(key)
        return items is not None, items
    if rule.source == "memory":
        own = board.get_memory(agent_id)
        if key in own or "." not in key:
            return key in own, own.get(key)
        other, other_key = key.split(".", 1)
        memory = board.get_memory(other)
        return other_key in memory, memory.get(other_key)
    return key in meta, meta.get(key)


def _compare(rule: ConditionRule, found: bool, actual: Any) -> bool:
    op, expected = rule.op, rule.value
    if op == "present":
        return found
    if op in ("not_exists", "empty"):
        return not found or not actual
    if not found:
        return False
    if op in ("exists", "not_empty"):
        return bool(actual)
    if rule.source == "queue" and isinstance(actual, list) and is_number(expected):
        actual = len(actual)
    if op == "eq":
        return bool(actual == expected)
    if op == "neq":
        return bool(actual != expected)
    if op in _ORDERING:
        actual, expected = _comparable(actual, expected)
        return actual is not None and _ORDERING[op](actual, expected)
    if op == "in":
        return actual in expected
    if op == "not_in":
        return actual not in expected
    if op == "contains":
        return isinstance(actual, str | list | dict) and expected in actual
    # mod
    actual = _numeric(actual)
    return is_number(actual) and actual % expected == rule.result


def _numeric(value: Any) -> Any:
    """``value``, or the finite number a text holds (``"5"``, ``" 0.5 "``): numbers that a
    database, a form or JSON kept as text."""
    if not isinstance(value, str):
        return value
    try:
        number = float(value.strip())
    except ValueError:
        return value
    if not math.isfinite(number):
        return value
    return int(number) if number.is_integer() and "." not in value else number


def _comparable(actual: Any, expected: Any) -> tuple[Any, Any]:
    """A number and a numeric text compared as two numbers (``5 >= "3"`` could never hold);
    two texts still compare as texts."""
    if is_number(actual) != is_number(expected):
        return _numeric(actual), _numeric(expected)
    return actual, expected
