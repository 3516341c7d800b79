"""Configuration problems: strict loading raises, lenient loading warns and carries on.

Agent configurations usually come from a database, edited by people, while the engine serves
live sessions. A bad value in one agent must not take the engine down, so configurations are
read in one of two modes:

- **strict** (``AgentConfig`` built in code, CI checks, ``DESKWORK_REALTIME_STRICT_CONFIG=1``):
  every problem is collected and :class:`AgentConfigurationError` lists them all;
- **lenient** (``DynamicAgent`` configs by default): each problem is logged once as one
  structured warning (a :class:`ConfigProblem` in the record's ``config_problem`` attribute)
  and the value is repaired: a broken condition rule evaluates false, a bad number is clamped
  or treated as unset, an unknown trigger mode is dropped.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from deskwork._logs import get_stdlib_logger
from deskwork.exceptions import ConfigurationError
from deskwork.utils import is_number

__all__ = [
    "STRICT_ENV",
    "AgentConfigurationError",
    "ConfigProblem",
    "ProblemLog",
    "default_strict",
    "positive_number",
]

STRICT_ENV: Final = "DESKWORK_REALTIME_STRICT_CONFIG"
"""Set to ``1``/``true``/``yes`` to make strict loading the default everywhere (CI)."""

logger = get_stdlib_logger("deskwork.realtime.config")


class AgentConfigurationError(ConfigurationError):
    """An agent configuration is invalid (strict loading) or cannot be used at all.

    ``problems`` lists every problem found, so one load reports all of them at once.
    """

    def __init__(self, message: str, problems: Iterable[ConfigProblem] = ()) -> None:
        """Create the error with its message and the problems behind it."""
        super().__init__(message)
        self.problems: list[ConfigProblem] = list(problems)


class ConfigProblem(BaseModel):
    """One problem in one agent's configuration (the payload of a structured warning)."""

    model_config = ConfigDict(frozen=True)

    agent_id: str
    """The agent (its id, or its name when the id is not known yet)."""
    field: str
    """Where the problem is, e.g. ``trigger_config.cooldown`` or
    ``trigger_conditions.rules[1]``."""
    message: str
    """What is wrong."""
    action: str
    """What lenient loading does about it, e.g. ``"rule evaluates false"``."""

    def describe(self) -> str:
        """One line: ``agent 'x': field: message (action)``."""
        return f"agent {self.agent_id!r}: {self.field}: {self.message} ({self.action})"


class ProblemLog:
    """Collects the problems of one load, then raises (strict) or warns (lenient)."""

    def __init__(self, agent_id: str, *, strict: bool) -> None:
        """Collect problems for ``agent_id``."""
        self.agent_id = agent_id
        self.strict = strict
        self.problems: list[ConfigProblem] = []

    def add(self, field: str, message: str, action: str) -> None:
        """Record one problem."""
        self.problems.append(
            ConfigProblem(agent_id=self.agent_id, field=field, message=message, action=action)
        )

    def finish(self) -> list[ConfigProblem]:
        """Raise every problem (strict) or log one warning per problem (lenient).

        Raises:
            AgentConfigurationError: strict mode and at least one problem.
        """
        if not self.problems:
            return []
        if self.strict:
            lines = "\n".join(p.describe() for p in self.problems)
            raise AgentConfigurationError(lines, self.problems)
        for problem in self.problems:
            logger.warning(
                "realtime config problem: %s",
                problem.describe(),
                extra={"config_problem": problem.model_dump()},
            )
        return list(self.problems)


def default_strict() -> bool:
    """Whether loading is strict when the caller does not say (the ``STRICT_ENV`` switch)."""
    return os.environ.get(STRICT_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def positive_number(
    value: Any, field: str, log: ProblemLog, *, integer: bool = False, allow_zero: bool = False
) -> Any:
    """``value`` when it is a usable positive number (or ``None``), else ``None`` and a problem.

    Numeric strings (``"30"``) are accepted, as databases often store numbers as text.
    """
    if value is None:
        return None
    number: float | None = None
    if is_number(value):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    kind = "an integer" if integer else "a number"
    bound = "at least 0" if allow_zero else "greater than 0"
    if number is None or not math.isfinite(number):
        log.add(field, f"must be {kind}, not {value!r}", "ignored (treated as unset)")
        return None
    if number < 0 or (number == 0 and not allow_zero):
        log.add(field, f"must be {bound}, not {value!r}", "ignored (treated as unset)")
        return None
    if integer:
        if number != int(number):
            log.add(field, f"must be {kind}, not {value!r}", "ignored (treated as unset)")
            return None
        return int(number)
    return number
