"""Per-agent knowledge: ``react_config.yaml``, on-demand slot loading and prompt assembly.

An agent's knowledge lives in ``<base_dir>/<agent_name>/``::

    react_config.yaml   actions and knowledge slots (see ``knowledge.schema``)
    react_core.md       the core prompt, with ``{placeholder}`` variables
    slots/*.md          the modules the slots are made of

:class:`ReactTemplateManager` validates the config when it is built, loads slots (dependencies
first) within a per-slot and a global token budget, and assembles the core prompt.
"""

from __future__ import annotations

import asyncio
import re
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from deskwork.graph.core.exceptions import (
    KnowledgeConfigValidationError,
    KnowledgeLoadError,
    KnowledgePathError,
    KnowledgeSlotNotFoundError,
)
from deskwork.graph.core.token_counting import CharDivisionTokenCounter, TokenCounter
from deskwork.graph.knowledge.loader import (
    FileSystemKnowledgeLoader,
    KnowledgeLoader,
    check_relative_ref,
)
from deskwork.graph.knowledge.models import KnowledgeLoadResult, KnowledgeSlotDef
from deskwork.graph.knowledge.schema import ReactActionSchema, ReactConfigSchema

if TYPE_CHECKING:
    from deskwork.graph.config.schema import TimeoutConfig

__all__ = [
    "CONFIG_FILENAME",
    "CORE_PROMPT_FILENAME",
    "DEFAULT_CORE_PROMPT",
    "DEFAULT_MAX_LOADED_TOKENS",
    "ReactTemplateManager",
]

CONFIG_FILENAME = "react_config.yaml"
CORE_PROMPT_FILENAME = "react_core.md"
DEFAULT_MAX_LOADED_TOKENS = 8192
"""Same as ``KnowledgeConfig.max_total_tokens``."""

DEFAULT_CORE_PROMPT = """You are the {agent_name} agent. Think step by step, then take one action.

Available actions:
{available_actions}

Knowledge slots you can load (with the request_slot action):
{available_slots}
"""
"""Used when an agent folder has no ``react_core.md``."""

_AGENT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _check_agent_name(agent_name: str) -> str:
    if not _AGENT_NAME.fullmatch(agent_name):
        raise KnowledgePathError(
            f"agent name {agent_name!r} cannot name a knowledge folder "
            "(expected [A-Za-z][A-Za-z0-9_-]*, at most 64 characters)"
        )
    return agent_name


def read_react_config(path: Path) -> ReactConfigSchema:
    """Read and validate one ``react_config.yaml``.

    Raises:
        KnowledgeLoadError: The file is missing or unreadable.
        KnowledgeConfigValidationError: It is not YAML, or fails ``ReactConfigSchema``.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KnowledgeLoadError(f"cannot read {path}: {type(exc).__name__}: {exc}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KnowledgeConfigValidationError(f"{path} is not valid YAML: {exc}") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise KnowledgeConfigValidationError(
            f"{path} must hold a mapping, not {type(data).__name__}"
        )
    try:
        return ReactConfigSchema.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        )
        raise KnowledgeConfigValidationError(f"{path} is invalid: {problems}") from exc


def render_template(template: str, variables: dict[str, Any]) -> str:
    """Replace each ``{name}`` whose name is in ``variables``; leave other braces untouched.

    Unlike ``str.format`` this is safe for markdown holding JSON examples (``{"a": 1}``).
    """

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(variables[name]) if name in variables else match.group(0)

    return _PLACEHOLDER.sub(substitute, template)


@dataclass(slots=True)
class _Loaded:
    """The slots one request has loaded: name -> (content, tokens), in load order."""

    slots: dict[str, tuple[str, int]] = field(default_factory=dict)
    tokens: int = 0


class ReactTemplateManager:
    """One agent's knowledge config, loaded slots and prompt templates.

    ``max_loaded_tokens`` is a budget per request: :meth:`begin_request` (which
    ``ReactExecutor.execute()`` calls first) gives the request running in the current asyncio
    context its own empty set of loaded slots, so one manager can serve any number of
    consecutive or concurrent requests. Outside a request, loaded slots count until
    :meth:`reset`. Module contents read once are cached for every request until :meth:`reset`.

    Args:
        agent_name: The agent; its folder is ``<base_dir>/<agent_name>``.
        base_dir: The knowledge root holding one folder per agent.
        loader: Reads modules (default: a ``FileSystemKnowledgeLoader`` on ``base_dir``).
            Module references passed to it are ``<agent_name>/<module>``.
        max_loaded_tokens: The most tokens all loaded slots together may hold.
        token_counter: Counts tokens (default ``CharDivisionTokenCounter()``).
        timeout_config: ``file_io_seconds`` for the default loader.
        react_config: A config to use instead of reading ``react_config.yaml``.

    Raises:
        KnowledgePathError: The agent name or a module path could escape the knowledge root.
        KnowledgeLoadError: ``react_config.yaml`` is missing or unreadable.
        KnowledgeConfigValidationError: ``react_config.yaml`` is invalid.
        ValueError: ``max_loaded_tokens`` is not positive.
    """

    def __init__(
        self,
        agent_name: str,
        base_dir: str | Path,
        loader: KnowledgeLoader | None = None,
        *,
        max_loaded_tokens: int = DEFAULT_MAX_LOADED_TOKENS,
        token_counter: TokenCounter | None = None,
        timeout_config: TimeoutConfig | None = None,
        react_config: ReactConfigSchema | None = None,
    ) -> None:
        if max_loaded_tokens <= 0:
            raise ValueError(f"max_loaded_tokens must be > 0, got {max_loaded_tokens}")
        self._agent_name = _check_agent_name(agent_name)
        self._base_dir = Path(base_dir)
        self._loader = loader or FileSystemKnowledgeLoader(
            self._base_dir, timeout_config=timeout_config
        )
        self._max_loaded_tokens = max_loaded_tokens
        self._token_counter = token_counter or CharDivisionTokenCounter()
        self._config = react_config or read_react_config(self._config_path())
        self._slots = {
            name: KnowledgeSlotDef.from_schema(name, slot)
            for name, slot in self._config.slots.items()
        }
        for slot in self._slots.values():
            for module in slot.modules:
                check_relative_ref(module)
        self._lock = asyncio.Lock()
        self._outside = _Loaded()  # what is loaded outside any request
        self._request: ContextVar[_Loaded | None] = ContextVar(
            f"react_loaded_{self._agent_name}_{id(self):x}", default=None
        )
        self._contents: dict[str, tuple[str, int]] = {}  # read and checked slot contents
        self._core_prompts: dict[str, str] = {}
        self._closed = False

    @classmethod
    async def create(
        cls,
        agent_name: str,
        base_dir: str | Path,
        loader: KnowledgeLoader | None = None,
        *,
        max_loaded_tokens: int = DEFAULT_MAX_LOADED_TOKENS,
        token_counter: TokenCounter | None = None,
        timeout_config: TimeoutConfig | None = None,
    ) -> ReactTemplateManager:
        """Build a manager with the config file read in a worker thread (no blocking I/O)."""
        return await asyncio.to_thread(
            cls,
            agent_name,
            base_dir,
            loader,
            max_loaded_tokens=max_loaded_tokens,
            token_counter=token_counter,
            timeout_config=timeout_config,
        )

    def _config_path(self) -> Path:
        root = self._base_dir.resolve()
        path = (root / self._agent_name / CONFIG_FILENAME).resolve()
        if not path.is_relative_to(root):
            raise KnowledgePathError(f"{CONFIG_FILENAME} of {self._agent_name!r} escapes {root}")
        return path

    # -- read-only views -------------------------------------------------------------------

    @property
    def agent_name(self) -> str:
        """The agent this manager serves."""
        return self._agent_name

    @property
    def config(self) -> ReactConfigSchema:
        """The validated ``react_config.yaml``."""
        return self._config

    @property
    def max_passes(self) -> int:
        """``max_passes`` from the config."""
        return self._config.max_passes

    @property
    def actions(self) -> dict[str, ReactActionSchema]:
        """Declared actions by name."""
        return dict(self._config.actions)

    @property
    def slots(self) -> dict[str, KnowledgeSlotDef]:
        """Declared knowledge slots by name."""
        return dict(self._slots)

    @property
    def token_counter(self) -> TokenCounter:
        """The counter used for every budget."""
        return self._token_counter

    @property
    def max_loaded_tokens(self) -> int:
        """The global budget of loaded knowledge."""
        return self._max_loaded_tokens

    @property
    def loaded_tokens(self) -> int:
        """Tokens loaded by the current request (or outside requests)."""
        return self._current().tokens

    @property
    def loaded_slots(self) -> tuple[str, ...]:
        """Slot names loaded by the current request (or outside requests), in load order."""
        return tuple(self._current().slots)

    @property
    def is_closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    def get_slot(self, slot_name: str) -> KnowledgeSlotDef:
        """The definition of ``slot_name``; raises ``KnowledgeSlotNotFoundError`` if unknown."""
        try:
            return self._slots[slot_name]
        except KeyError:
            known = ", ".join(sorted(self._slots)) or "none"
            raise KnowledgeSlotNotFoundError(
                f"agent {self._agent_name!r} has no knowledge slot {slot_name!r} (known: {known})"
            ) from None

    def get_loaded_content(self, slot_name: str) -> str | None:
        """The content of a loaded slot, or ``None`` if it is not loaded."""
        entry = self._current().slots.get(slot_name)
        return entry[0] if entry else None

    def resolve_dependencies(self, slot_name: str) -> list[str]:
        """Every slot ``slot_name`` depends on, transitively, in a valid load order."""
        order: list[str] = []

        def visit(name: str) -> None:
            for dep in self.get_slot(name).dependencies:
                if dep not in order:
                    visit(dep)
                    order.append(dep)

        visit(slot_name)
        return order

    # -- loading ---------------------------------------------------------------------------

    def _ensure_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"ReactTemplateManager for {self._agent_name!r} is closed")

    def _current(self) -> _Loaded:
        return self._request.get() or self._outside

    def begin_request(self) -> None:
        """Start a request in the current asyncio context: nothing loaded, the whole budget free.

        Loads made in this context (and in tasks it starts afterwards) count toward this
        request only; other requests, each in its own task, keep their own budget. What the
        request loaded stays visible here (``loaded_slots``) until the next ``begin_request``.

        Raises:
            RuntimeError: The manager is closed.
        """
        self._ensure_open()
        self._request.set(_Loaded())

    async def load_slot(self, slot_name: str) -> KnowledgeLoadResult:
        """Load ``slot_name`` and its dependencies (dependencies first); cached once loaded.

        All slots this call needs are read, checked against their own ``max_tokens``, then
        against ``max_loaded_tokens`` together, and only then recorded: a failed load leaves
        nothing half-loaded. The budget check and the recording happen under one lock, so two
        concurrent loads cannot both squeeze under the budget.

        Raises:
            KnowledgeSlotNotFoundError: Unknown slot.
            KnowledgePathError: A module path escapes the knowledge root.
            KnowledgeLoadError: A module cannot be read, or a token budget would be exceeded.
            RuntimeError: The manager is closed.
        """
        self._ensure_open()
        order = [*self.resolve_dependencies(slot_name), slot_name]
        loaded = self._current()
        if slot_name in loaded.slots:  # fast path, no lock
            return self._result(loaded, slot_name, order, ())
        async with self._lock:
            self._ensure_open()
            if slot_name in loaded.slots:  # loaded while we waited
                return self._result(loaded, slot_name, order, ())
            pending = [name for name in order if name not in loaded.slots]
            fresh: dict[str, tuple[str, int]] = {}
            for name in pending:
                fresh[name] = self._contents.get(name) or await self._read_checked(name)
            added = sum(tokens for _, tokens in fresh.values())
            if loaded.tokens + added > self._max_loaded_tokens:
                raise KnowledgeLoadError(
                    f"loading slot {slot_name!r} needs {added} tokens "
                    f"({', '.join(pending)}); {loaded.tokens} of "
                    f"max_loaded_tokens={self._max_loaded_tokens} are already loaded"
                )
            self._contents.update(fresh)
            loaded.slots.update(fresh)
            loaded.tokens += added
            return self._result(loaded, slot_name, order, tuple(pending))

    async def _read_checked(self, name: str) -> tuple[str, int]:
        content = await self._read_slot(self._slots[name])
        return content, self._check_slot_budget(name, content)

    async def _read_slot(self, slot: KnowledgeSlotDef) -> str:
        parts = [
            (await self._loader.load_module(f"{self._agent_name}/{module}")).strip()
            for module in slot.modules
        ]
        return "\n\n".join(parts)

    def _check_slot_budget(self, name: str, content: str) -> int:
        tokens = self._token_counter.count(content)
        cap = self._slots[name].max_tokens
        if cap is not None and tokens > cap:
            raise KnowledgeLoadError(
                f"knowledge slot {name!r} has {tokens} tokens, over its max_tokens={cap}"
            )
        return tokens

    def _result(
        self, loaded: _Loaded, slot_name: str, order: list[str], newly_loaded: tuple[str, ...]
    ) -> KnowledgeLoadResult:
        content, tokens = loaded.slots[slot_name]
        return KnowledgeLoadResult(
            slot_name=slot_name,
            content=content,
            token_count=tokens,
            modules=self._slots[slot_name].modules,
            dependencies=tuple(order[:-1]),
            newly_loaded=newly_loaded,
            total_loaded_tokens=loaded.tokens,
        )

    # -- prompts ---------------------------------------------------------------------------

    async def load_core_prompt(self, agent_name: str | None = None, /, **kwargs: Any) -> str:
        """The agent's ``react_core.md`` with its ``{placeholders}`` filled in.

        Built-in variables: ``agent_name``, ``available_actions``, ``available_slots``,
        ``max_passes``; ``kwargs`` (any names) add to or override them. Unknown placeholders
        stay as they are. Without a ``react_core.md`` the manager uses
        :data:`DEFAULT_CORE_PROMPT`.

        Args:
            agent_name: Whose ``react_core.md`` (default: this manager's agent).
        """
        self._ensure_open()
        name = _check_agent_name(agent_name or self._agent_name)
        template = self._core_prompts.get(name)
        if template is None:
            template = await self._read_core_template(name)
            self._core_prompts[name] = template
        variables: dict[str, Any] = {
            "agent_name": name,
            "available_actions": self.format_available_actions(),
            "available_slots": self.format_available_slots(),
            "max_passes": self.max_passes,
            **kwargs,
        }
        return render_template(template, variables)

    async def _read_core_template(self, agent_name: str) -> str:
        try:
            return await self._loader.load_module(f"{agent_name}/{CORE_PROMPT_FILENAME}")
        except KnowledgeLoadError as exc:
            if isinstance(exc.__cause__, FileNotFoundError):
                return DEFAULT_CORE_PROMPT
            raise

    def format_available_slots(self) -> str:
        """One line per slot: name, description, when to load it, what it depends on."""
        if not self._slots:
            return "(no knowledge slots)"
        lines = []
        for slot in self._slots.values():
            line = f"- {slot.name}: {slot.description}"
            if slot.triggers:
                line += f" (load when: {slot.triggers})"
            if slot.dependencies:
                line += f" [also loads: {', '.join(slot.dependencies)}]"
            lines.append(line)
        return "\n".join(lines)

    def format_available_actions(self) -> str:
        """One entry per action with its parameters, required ones marked."""
        if not self._config.actions:
            return "(no actions)"
        lines = []
        for name, action in self._config.actions.items():
            lines.append(f"- {name}: {action.description}")
            for param, description in action.parameters.items():
                marker = " (required)" if param in action.required else ""
                lines.append(f"    - {param}{marker}: {description}")
        return "\n".join(lines)

    # -- lifecycle -------------------------------------------------------------------------

    async def reset(self) -> None:
        """Forget the slots loaded by the current request and outside requests, and every
        cached module and core prompt (the budget is free again; files are read anew)."""
        self._ensure_open()
        async with self._lock:
            self._clear()

    def _clear(self) -> None:
        for loaded in {id(x): x for x in (self._current(), self._outside)}.values():
            loaded.slots.clear()
            loaded.tokens = 0
        self._contents.clear()
        self._core_prompts.clear()

    async def close(self) -> None:
        """Release loaded knowledge; later operations raise ``RuntimeError``. Idempotent."""
        if self._closed:
            return
        self._closed = True
        async with self._lock:
            self._clear()

    async def __aenter__(self) -> ReactTemplateManager:
        self._ensure_open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return (
            f"ReactTemplateManager(agent_name={self._agent_name!r}, "
            f"slots={len(self._slots)}, actions={len(self._config.actions)}, "
            f"loaded={len(self.loaded_slots)}, "
            f"tokens={self.loaded_tokens}/{self._max_loaded_tokens}, {state})"
        )
