"""ReactTemplateManager: config loading, slot loading, budgets, prompts, lifecycle."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from deskwork.graph.core.exceptions import (
    KnowledgeConfigValidationError,
    KnowledgeError,
    KnowledgeLoadError,
    KnowledgePathError,
    KnowledgeSlotNotFoundError,
)
from deskwork.graph.core.token_counting import CharDivisionTokenCounter, TokenCounter
from deskwork.graph.knowledge import (
    FileSystemKnowledgeLoader,
    KnowledgeLoader,
    ReactConfigSchema,
    ReactTemplateManager,
)

CONFIG = """
max_passes: 4
actions:
  request_slot:
    description: Load a knowledge slot for reference
    parameters:
      slot: Name of the slot to load
    required: [slot]
  decide:
    description: Make a final routing decision
    parameters:
      next_agent: The agent to route to
      content: Summary of reasoning
    required: [next_agent]
slots:
  routing_rules:
    description: Rules for routing requests to agents
    modules: [slots/routing_rules.md]
    triggers: When deciding which agent should handle the request
    max_tokens: 2000
  escalation_policy:
    description: Escalation rules
    modules: [slots/escalation_policy.md, slots/contacts.md]
    dependencies: [routing_rules]
  big:
    description: A large manual
    modules: [slots/big.md]
    max_tokens: 10
"""

CORE = 'You are {agent_name}. Actions:\n{available_actions}\nExample: {"next_agent": "x"} {unknown}'


def write_agent(
    base: Path, name: str = "supervisor", config: str = CONFIG, core: str | None = CORE
) -> Path:
    folder = base / name
    (folder / "slots").mkdir(parents=True, exist_ok=True)
    (folder / "react_config.yaml").write_text(textwrap.dedent(config), encoding="utf-8")
    if core is not None:
        (folder / "react_core.md").write_text(core, encoding="utf-8")
    (folder / "slots" / "routing_rules.md").write_text("Route billing to billing.\n")
    (folder / "slots" / "escalation_policy.md").write_text("Escalate P1 at once.")
    (folder / "slots" / "contacts.md").write_text("On call: ops.")
    (folder / "slots" / "big.md").write_text("x" * 400)
    return base


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return write_agent(tmp_path / "llm_resources")


def manager(base: Path, **kwargs: object) -> ReactTemplateManager:
    return ReactTemplateManager("supervisor", base, **kwargs)  # type: ignore[arg-type]


# -- construction -------------------------------------------------------------------------


def test_loads_and_validates_config(base: Path) -> None:
    tm = ReactTemplateManager(
        agent_name="supervisor",
        base_dir=str(base),
        loader=FileSystemKnowledgeLoader(base_dir=base),
        max_loaded_tokens=8192,
    )
    assert tm.max_passes == 4
    assert set(tm.actions) == {"request_slot", "decide"}
    assert set(tm.slots) == {"routing_rules", "escalation_policy", "big"}
    assert tm.slots["escalation_policy"].modules == (
        "slots/escalation_policy.md",
        "slots/contacts.md",
    )
    assert isinstance(tm.token_counter, CharDivisionTokenCounter)
    assert tm.loaded_slots == ()
    assert tm.loaded_tokens == 0


async def test_create_factory(base: Path) -> None:
    tm = await ReactTemplateManager.create("supervisor", base, max_loaded_tokens=100)
    assert tm.max_loaded_tokens == 100
    assert tm.max_passes == 4


def test_missing_config_is_a_load_error(tmp_path: Path) -> None:
    (tmp_path / "ghost").mkdir()
    with pytest.raises(KnowledgeLoadError, match=r"react_config\.yaml"):
        ReactTemplateManager("ghost", tmp_path)


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ("actions: [unclosed", "not valid YAML"),
        ("- a\n- b\n", "must hold a mapping"),
        ("max_passes: 0\n", "max_passes"),
        ("bogus: 1\n", "bogus"),
        (
            "slots:\n  a: {description: d, modules: [a.md], dependencies: [b]}\n"
            "  b: {description: d, modules: [b.md], dependencies: [a]}\n",
            "circular slot dependency",
        ),
        (
            "slots:\n  a: {description: d, modules: [a.md], dependencies: [nope]}\n",
            "unknown slot 'nope'",
        ),
    ],
    ids=["bad-yaml", "not-a-mapping", "zero-passes", "typo", "cycle", "unknown-dep"],
)
def test_invalid_config_is_a_validation_error(tmp_path: Path, config: str, match: str) -> None:
    write_agent(tmp_path, "bad", config=config)
    with pytest.raises(KnowledgeConfigValidationError, match=match):
        ReactTemplateManager("bad", tmp_path)


def test_empty_config_uses_defaults(tmp_path: Path) -> None:
    write_agent(tmp_path, "empty", config="")
    tm = ReactTemplateManager("empty", tmp_path)
    assert tm.max_passes == 5
    assert tm.format_available_slots() == "(no knowledge slots)"
    assert tm.format_available_actions() == "(no actions)"


@pytest.mark.parametrize("module", ["../other/x.md", "/etc/passwd", "slots/../../x.md"])
def test_escaping_module_path_fails_at_construction(tmp_path: Path, module: str) -> None:
    config = f"slots:\n  a: {{description: d, modules: ['{module}']}}\n"
    write_agent(tmp_path, "agent", config=config)
    with pytest.raises(KnowledgePathError):
        ReactTemplateManager("agent", tmp_path)


@pytest.mark.parametrize("name", ["../supervisor", "a/b", "", "1abc", "x" * 65])
def test_unsafe_agent_name_is_refused(base: Path, name: str) -> None:
    with pytest.raises(KnowledgePathError, match="cannot name a knowledge folder"):
        ReactTemplateManager(name, base)


def test_non_positive_budget_is_refused(base: Path) -> None:
    with pytest.raises(ValueError, match="max_loaded_tokens"):
        manager(base, max_loaded_tokens=0)


def test_config_can_be_given_directly(tmp_path: Path) -> None:
    cfg = ReactConfigSchema.model_validate(
        {"slots": {"s": {"description": "d", "modules": ["s.md"]}}}
    )
    tm = ReactTemplateManager("virtual", tmp_path, react_config=cfg)
    assert list(tm.slots) == ["s"]


# -- slot loading -------------------------------------------------------------------------


async def test_load_slot_reads_its_module(base: Path) -> None:
    tm = manager(base)
    result = await tm.load_slot("routing_rules")
    assert result.slot_name == "routing_rules"
    assert result.content == "Route billing to billing."
    assert result.token_count == CharDivisionTokenCounter().count(result.content)
    assert result.modules == ("slots/routing_rules.md",)
    assert result.newly_loaded == ("routing_rules",)
    assert not result.from_cache
    assert tm.loaded_tokens == result.token_count == result.total_loaded_tokens
    assert tm.get_loaded_content("routing_rules") == "Route billing to billing."


async def test_dependencies_load_first_and_modules_are_joined(base: Path) -> None:
    tm = manager(base)
    result = await tm.load_slot("escalation_policy")
    assert result.dependencies == ("routing_rules",)
    assert result.newly_loaded == ("routing_rules", "escalation_policy")
    assert tm.loaded_slots == ("routing_rules", "escalation_policy")
    assert result.content == "Escalate P1 at once.\n\nOn call: ops."
    assert tm.resolve_dependencies("escalation_policy") == ["routing_rules"]


async def test_second_load_is_served_from_cache(base: Path) -> None:
    tm = manager(base)
    first = await tm.load_slot("routing_rules")
    (base / "supervisor" / "slots" / "routing_rules.md").write_text("CHANGED")
    second = await tm.load_slot("routing_rules")
    assert second.from_cache
    assert second.content == first.content
    assert tm.loaded_tokens == first.token_count  # not counted twice


async def test_unknown_slot(base: Path) -> None:
    with pytest.raises(KnowledgeSlotNotFoundError, match=r"no knowledge slot 'nope'.*big"):
        await manager(base).load_slot("nope")


async def test_per_slot_max_tokens(base: Path) -> None:
    tm = manager(base)
    with pytest.raises(KnowledgeLoadError, match=r"'big' has 100 tokens, over its max_tokens=10"):
        await tm.load_slot("big")
    assert tm.loaded_slots == ()
    assert tm.loaded_tokens == 0


async def test_per_slot_cap_is_checked_before_the_global_budget(base: Path) -> None:
    tm = manager(base, max_loaded_tokens=5)
    with pytest.raises(KnowledgeLoadError, match="over its max_tokens"):
        await tm.load_slot("big")


async def test_global_budget(base: Path) -> None:
    rules_tokens = CharDivisionTokenCounter().count("Route billing to billing.")
    tm = manager(base, max_loaded_tokens=rules_tokens)
    await tm.load_slot("routing_rules")
    with pytest.raises(KnowledgeLoadError, match="max_loaded_tokens"):
        await tm.load_slot("escalation_policy")
    # A failed load leaves nothing half-loaded.
    assert tm.loaded_slots == ("routing_rules",)
    assert tm.loaded_tokens == rules_tokens


async def test_budget_failure_on_the_slot_does_not_keep_its_dependencies(base: Path) -> None:
    tm = manager(base, max_loaded_tokens=7)  # enough for routing_rules alone
    with pytest.raises(KnowledgeLoadError, match=r"routing_rules, escalation_policy"):
        await tm.load_slot("escalation_policy")
    assert tm.loaded_slots == ()


async def test_concurrent_loads_cannot_overshoot_the_budget(tmp_path: Path) -> None:
    # Two slots of 5 tokens each, a budget of 8: exactly one may load (TOCTOU guard).
    config = (
        "slots:\n"
        "  a: {description: d, modules: [slots/a.md]}\n"
        "  b: {description: d, modules: [slots/b.md]}\n"
    )
    write_agent(tmp_path, "agent", config=config)
    (tmp_path / "agent" / "slots" / "a.md").write_text("a" * 20)
    (tmp_path / "agent" / "slots" / "b.md").write_text("b" * 20)

    class SlowLoader(FileSystemKnowledgeLoader):
        async def load_module(self, module_ref: str) -> str:
            await asyncio.sleep(0.01)  # both loads are in flight at once
            return await super().load_module(module_ref)

    tm = ReactTemplateManager("agent", tmp_path, SlowLoader(tmp_path), max_loaded_tokens=8)
    results = await asyncio.gather(tm.load_slot("a"), tm.load_slot("b"), return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 1
    assert isinstance(errors[0], KnowledgeLoadError)
    assert tm.loaded_tokens == 5


async def test_concurrent_loads_of_one_slot_read_it_once(base: Path) -> None:
    reads: list[str] = []

    class CountingLoader(FileSystemKnowledgeLoader):
        async def load_module(self, module_ref: str) -> str:
            reads.append(module_ref)
            await asyncio.sleep(0.01)
            return await super().load_module(module_ref)

    tm = manager(base, loader=CountingLoader(base))
    results = await asyncio.gather(*(tm.load_slot("routing_rules") for _ in range(5)))
    assert reads == ["supervisor/slots/routing_rules.md"]
    assert sum(not r.from_cache for r in results) == 1


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
async def test_module_symlinked_outside_the_root_is_refused(tmp_path: Path) -> None:
    base = write_agent(tmp_path / "kb")
    (tmp_path / "secret.md").write_text("TOP SECRET")
    rules = base / "supervisor" / "slots" / "routing_rules.md"
    rules.unlink()
    rules.symlink_to(tmp_path / "secret.md")
    tm = manager(base)
    with pytest.raises(KnowledgePathError):
        await tm.load_slot("routing_rules")
    assert tm.loaded_slots == ()


async def test_custom_loader_and_token_counter(tmp_path: Path) -> None:
    class DictLoader(KnowledgeLoader):
        def __init__(self) -> None:
            self.files = {"agent/s.md": "one two three four"}

        async def load_module(self, module_ref: str) -> str:
            try:
                return self.files[module_ref]
            except KeyError:
                raise KnowledgeLoadError(module_ref) from FileNotFoundError(module_ref)

        def resolve_module_path(self, module_ref: str) -> Path:
            return Path(module_ref)

    class WordCounter(TokenCounter):
        def count(self, text: str) -> int:
            return len(text.split())

    cfg = ReactConfigSchema.model_validate(
        {"slots": {"s": {"description": "d", "modules": ["s.md"], "max_tokens": 4}}}
    )
    tm = ReactTemplateManager(
        "agent", tmp_path, DictLoader(), token_counter=WordCounter(), react_config=cfg
    )
    assert tm.token_counter.count("a b") == 2
    result = await tm.load_slot("s")
    assert result.token_count == 4
    # No react_core.md in the dict: the built-in core prompt is used.
    prompt = await tm.load_core_prompt()
    assert "You are the agent agent" in prompt
    assert "- s: d" in prompt


# -- prompts ------------------------------------------------------------------------------


async def test_core_prompt_fills_known_placeholders_only(base: Path) -> None:
    tm = manager(base)
    prompt = await tm.load_core_prompt("supervisor")
    assert prompt.startswith("You are supervisor. Actions:\n- request_slot:")
    assert '{"next_agent": "x"}' in prompt  # JSON braces survive
    assert "{unknown}" in prompt
    assert "{unknown}" not in await tm.load_core_prompt("supervisor", unknown="filled")
    assert "filled" in await tm.load_core_prompt("supervisor", unknown="filled")


async def test_core_prompt_defaults_when_file_missing(tmp_path: Path) -> None:
    write_agent(tmp_path, "agent", core=None)
    prompt = await ReactTemplateManager("agent", tmp_path).load_core_prompt()
    assert "You are the agent agent" in prompt
    assert "- routing_rules: Rules for routing requests to agents" in prompt


async def test_core_prompt_other_errors_propagate(tmp_path: Path) -> None:
    write_agent(tmp_path, "agent", core=None)
    (tmp_path / "agent" / "react_core.md").mkdir()
    with pytest.raises(KnowledgeLoadError):
        await ReactTemplateManager("agent", tmp_path).load_core_prompt()


def test_format_available_slots(base: Path) -> None:
    text = manager(base).format_available_slots()
    assert text.splitlines() == [
        "- routing_rules: Rules for routing requests to agents "
        "(load when: When deciding which agent should handle the request)",
        "- escalation_policy: Escalation rules [also loads: routing_rules]",
        "- big: A large manual",
    ]


def test_format_available_actions(base: Path) -> None:
    text = manager(base).format_available_actions()
    assert text.splitlines() == [
        "- request_slot: Load a knowledge slot for reference",
        "    - slot (required): Name of the slot to load",
        "- decide: Make a final routing decision",
        "    - next_agent (required): The agent to route to",
        "    - content: Summary of reasoning",
    ]


# -- lifecycle ----------------------------------------------------------------------------


async def test_reset_frees_the_budget(base: Path) -> None:
    tm = manager(base)
    await tm.load_slot("escalation_policy")
    (base / "supervisor" / "slots" / "routing_rules.md").write_text("Fresh rules.")
    await tm.reset()
    assert tm.loaded_slots == ()
    assert tm.loaded_tokens == 0
    assert (await tm.load_slot("routing_rules")).content == "Fresh rules."


async def test_closed_manager_refuses_work(base: Path) -> None:
    tm = manager(base)
    await tm.load_slot("routing_rules")
    await tm.close()
    await tm.close()  # idempotent
    assert tm.is_closed
    assert tm.loaded_tokens == 0
    for call in (tm.load_slot("routing_rules"), tm.load_core_prompt(), tm.reset()):
        with pytest.raises(RuntimeError, match="closed"):
            await call


async def test_async_context_manager_closes(base: Path) -> None:
    async with manager(base) as tm:
        await tm.load_slot("routing_rules")
        assert not tm.is_closed
    assert tm.is_closed


def test_repr(base: Path) -> None:
    text = repr(manager(base, max_loaded_tokens=99))
    assert text == (
        "ReactTemplateManager(agent_name='supervisor', slots=3, actions=2, loaded=0, "
        "tokens=0/99, open)"
    )


def test_errors_share_the_knowledge_base_class() -> None:
    for exc in (KnowledgeLoadError, KnowledgePathError, KnowledgeSlotNotFoundError):
        assert issubclass(exc, KnowledgeError)


async def test_core_prompt_variables_may_use_any_name(base: Path) -> None:
    tm = manager(base)
    prompt = await tm.load_core_prompt("supervisor", agent_name="Router", self="x")
    assert prompt.startswith("You are Router.")


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_config_symlinked_outside_the_root_is_refused(tmp_path: Path) -> None:
    outside = write_agent(tmp_path / "elsewhere")
    base = tmp_path / "kb"
    (base / "supervisor").mkdir(parents=True)
    (base / "supervisor" / "react_config.yaml").symlink_to(
        outside / "supervisor" / "react_config.yaml"
    )
    with pytest.raises(KnowledgePathError, match=r"react_config\.yaml"):
        ReactTemplateManager("supervisor", base)
