"""Load an :class:`OrchestratorConfig` from a YAML file, a YAML string or a dict.

A missing or unreadable file, or text that is not YAML, raises :class:`ConfigLoadError`;
content that fails validation raises :class:`ConfigValidationError`, whose message lists
every offending field (``agents[1].name: ...``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deskwork._extras import require
from deskwork.graph.config.schema import OrchestratorConfig
from deskwork.graph.core.exceptions import ConfigLoadError, ConfigValidationError

__all__ = [
    "ConfigLoadError",
    "ConfigValidationError",
    "load_config",
    "load_config_from_dict",
    "load_config_from_string",
]


def load_config(path: str | Path) -> OrchestratorConfig:
    """Read and validate the YAML config file at ``path``.

    Raises:
        ConfigLoadError: the file does not exist, cannot be read, or is not valid YAML.
        ConfigValidationError: the content is not a valid configuration.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigLoadError(f"config file not found: {file}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigLoadError(f"cannot read config file {file}: {exc}") from exc
    return _from_yaml(text, source=str(file))


def load_config_from_string(yaml_str: str) -> OrchestratorConfig:
    """Validate the configuration written as YAML in ``yaml_str``.

    Raises:
        ConfigLoadError: the text is not valid YAML.
        ConfigValidationError: the content is not a valid configuration.
    """
    return _from_yaml(yaml_str, source="<string>")


def load_config_from_dict(data: dict[str, Any]) -> OrchestratorConfig:
    """Validate a configuration given as a plain mapping (as YAML would produce).

    Raises:
        ConfigValidationError: ``data`` is not a mapping or not a valid configuration.
    """
    return _validate(data, source="<dict>")


def _from_yaml(text: str, *, source: str) -> OrchestratorConfig:
    yaml = require("yaml", "graph")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigLoadError(f"{source} is not valid YAML: {exc}") from exc
    return _validate(data, source=source)


def _validate(data: object, *, source: str) -> OrchestratorConfig:
    if data is None:
        raise ConfigValidationError(f"{source}: the configuration is empty; 'agents' is required")
    if not isinstance(data, dict):
        raise ConfigValidationError(
            f"{source}: the configuration must be a mapping, not {type(data).__name__}"
        )
    try:
        return OrchestratorConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigValidationError(
            f"invalid configuration in {source}:\n{_describe(exc)}", errors=exc.errors()
        ) from exc


def _describe(exc: ValidationError) -> str:
    """One line per error: ``  agents[0].name: <message>``."""
    lines = []
    for error in exc.errors():
        where = "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"]
        ).lstrip(".")
        message = str(error["msg"]).removeprefix("Value error, ")
        lines.append(f"  {where}: {message}" if where else f"  {message}")
    return "\n".join(lines)
