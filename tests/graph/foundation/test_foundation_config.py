"""deskwork.graph.config: schema defaults, ranges, name rules, cross-validation and the loader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from deskwork.exceptions import ConfigurationError as DeskworkConfigurationError
from deskwork.graph.config import (
    AgentConfig,
    ConfigLoadError,
    ConfigValidationError,
    ContextConfig,
    KnowledgeConfig,
    OrchestratorConfig,
    RetryConfig,
    SessionConfig,
    TimeoutConfig,
    TopologyConfig,
    TopologyEdgeConfig,
    get_default_config,
    load_config,
    load_config_from_dict,
    load_config_from_string,
)
from deskwork.graph.core import exceptions as exc_module

MINIMAL_YAML = """
agents:
  - name: supervisor
    type: supervisor
    description: Routes user requests to the appropriate agent
  - name: greeter
    type: custom
    description: Greets users
topology:
  edges:
    - from_agent: supervisor
      to_agent: greeter
    - from_agent: greeter
      to_agent: supervisor
  default_return: supervisor
context:
  shared_slots:
    max_tokens: 4096
  eviction_strategy: lru
session:
  enabled: false
"""


def _agent(name: str, type_: str = "custom") -> dict[str, Any]:
    return {"name": name, "type": type_, "description": f"the {name} agent"}


def _config(**sections: Any) -> dict[str, Any]:
    return {"agents": [_agent("supervisor", "supervisor"), _agent("worker")], **sections}


class TestDefaults:
    def test_every_section_defaults(self) -> None:
        config = OrchestratorConfig(agents=[AgentConfig(**_agent("supervisor", "supervisor"))])
        assert config.topology == TopologyConfig(edges=[], default_return="supervisor")
        assert config.context.shared_slots.max_tokens == 4096
        tiers = config.context.tiered_slots
        assert (tiers.turn.max_tokens, tiers.session.max_tokens, tiers.long_term.max_tokens) == (
            4096,
            4096,
            4096,
        )
        assert config.context.eviction_strategy == "lru"
        assert config.session.enabled is True
        assert config.knowledge == KnowledgeConfig(
            enabled=False, base_dir="llm_resources", max_total_tokens=8192
        )
        assert config.retry == RetryConfig(
            initial_interval=0.5,
            backoff_factor=2.0,
            max_interval=128.0,
            max_attempts=3,
            jitter=True,
        )
        assert config.timeout == TimeoutConfig(
            llm_call_seconds=None,
            file_io_seconds=None,
            persistence_seconds=None,
            total_request_seconds=None,
        )

    def test_agent_optional_fields(self) -> None:
        agent = AgentConfig(name="a", type="custom", description="d")
        assert agent.model is None
        assert agent.knowledge_enabled is False

    def test_get_default_config_is_a_valid_single_supervisor(self) -> None:
        config = get_default_config()
        assert [(a.name, a.type) for a in config.agents] == [("supervisor", "supervisor")]
        assert config.topology.default_return == "supervisor"
        assert config == OrchestratorConfig.model_validate(config.model_dump())


class TestFrozenAndStrict:
    def test_models_are_frozen(self) -> None:
        config = get_default_config()
        with pytest.raises(ValidationError):
            config.retry.max_attempts = 5
        with pytest.raises(ValidationError):
            config.agents[0].name = "other"

    @pytest.mark.parametrize(
        "model",
        [
            AgentConfig,
            TopologyConfig,
            TopologyEdgeConfig,
            ContextConfig,
            SessionConfig,
            KnowledgeConfig,
            RetryConfig,
            TimeoutConfig,
            OrchestratorConfig,
        ],
    )
    def test_unknown_fields_are_rejected(self, model: type[Any]) -> None:
        with pytest.raises(ValidationError, match=r"extra_forbidden|Extra inputs"):
            model.model_validate({"typo_field": 1})

    def test_typo_in_nested_yaml_is_reported_with_its_path(self) -> None:
        with pytest.raises(ConfigValidationError, match=r"retry\.max_atempts"):
            load_config_from_dict(_config(retry={"max_atempts": 2}))


class TestRanges:
    @pytest.mark.parametrize(
        ("model", "field", "bad"),
        [
            (RetryConfig, "initial_interval", 0),
            (RetryConfig, "backoff_factor", -1.0),
            (RetryConfig, "max_interval", 0.0),
            (RetryConfig, "max_attempts", 0),
            (RetryConfig, "initial_interval", float("nan")),
            (TimeoutConfig, "llm_call_seconds", 0),
            (TimeoutConfig, "file_io_seconds", -0.1),
            (TimeoutConfig, "persistence_seconds", 0.0),
            (TimeoutConfig, "total_request_seconds", float("inf")),
            (KnowledgeConfig, "max_total_tokens", 0),
        ],
    )
    def test_out_of_range_values_are_rejected(self, model: type[Any], field: str, bad: Any) -> None:
        with pytest.raises(ValidationError) as info:
            model.model_validate({field: bad})
        assert info.value.errors()[0]["loc"] == (field,)

    def test_max_attempts_one_means_no_retry_and_is_allowed(self) -> None:
        assert RetryConfig(max_attempts=1).max_attempts == 1

    @pytest.mark.parametrize(
        "path", ["shared_slots", "tiered_slots.turn", "tiered_slots.long_term"]
    )
    def test_slot_budgets_must_be_positive(self, path: str) -> None:
        data: dict[str, Any] = {"max_tokens": 0}
        for part in reversed(path.split(".")):
            data = {part: data}
        with pytest.raises(ValidationError):
            ContextConfig.model_validate(data)

    def test_eviction_strategy_is_a_closed_set(self) -> None:
        for name in ("lru", "fifo", "priority", "demotion"):
            assert (
                ContextConfig.model_validate({"eviction_strategy": name}).eviction_strategy == name
            )
        with pytest.raises(ValidationError):
            ContextConfig.model_validate({"eviction_strategy": "random"})

    def test_agent_type_is_a_closed_set(self) -> None:
        with pytest.raises(ValidationError):
            AgentConfig.model_validate({"name": "a", "type": "worker", "description": "d"})

    def test_description_must_not_be_empty(self) -> None:
        with pytest.raises(ValidationError, match="at least 1 character"):
            AgentConfig(name="a", type="custom", description="")


class TestAgentNames:
    @pytest.mark.parametrize(
        ("name", "match"),
        [
            ("", "must not be empty"),
            ("__end__", "reserved"),
            ("__start__", "reserved"),
            ("1agent", "invalid"),
            ("_agent", "invalid"),
            ("agent name", "invalid"),
            ("agent.x", "invalid"),
            ("a" * 65, "limit is 64"),
        ],
    )
    def test_invalid_names(self, name: str, match: str) -> None:
        with pytest.raises(ValidationError, match=match):
            AgentConfig(name=name, type="custom", description="desc")

    @pytest.mark.parametrize("name", ["a", "Agent-1", "x_y-z", "a" * 64])
    def test_valid_names(self, name: str) -> None:
        assert AgentConfig(name=name, type="custom", description="d").name == name

    @given(st.from_regex(r"[a-zA-Z][a-zA-Z0-9_-]{0,63}", fullmatch=True))
    def test_every_name_matching_the_pattern_is_accepted(self, name: str) -> None:
        assert AgentConfig(name=name, type="custom", description="d").name == name

    @given(st.text(max_size=80))
    def test_names_are_accepted_exactly_when_they_match(self, name: str) -> None:
        ok = (
            1 <= len(name) <= 64
            and name[0].isascii()
            and name[0].isalpha()
            and all(c.isascii() and (c.isalnum() or c in "_-") for c in name)
        )
        try:
            AgentConfig(name=name, type="custom", description="d")
        except ValidationError:
            assert not ok
        else:
            assert ok


class TestCrossValidation:
    def test_duplicate_agent_names(self) -> None:
        data = {"agents": [_agent("supervisor"), _agent("supervisor")]}
        with pytest.raises(
            ConfigValidationError, match=r"agents: duplicate agent name.*supervisor"
        ):
            load_config_from_dict(data)

    def test_edge_to_unknown_agent_names_the_field(self) -> None:
        data = _config(topology={"edges": [{"from_agent": "supervisor", "to_agent": "ghost"}]})
        with pytest.raises(ConfigValidationError) as info:
            load_config_from_dict(data)
        assert "topology.edges[0].to_agent: unknown agent 'ghost'" in str(info.value)
        assert "defined agents: supervisor, worker" in str(info.value)

    def test_edge_from_unknown_agent_names_the_field(self) -> None:
        data = _config(topology={"edges": [{"from_agent": "ghost", "to_agent": "worker"}]})
        with pytest.raises(ConfigValidationError, match=r"edges\[0\]\.from_agent"):
            load_config_from_dict(data)

    def test_unknown_default_return(self) -> None:
        data = _config(topology={"default_return": "boss"})
        with pytest.raises(
            ConfigValidationError, match=r"topology\.default_return: unknown agent 'boss'"
        ):
            load_config_from_dict(data)

    def test_default_return_must_exist_even_without_edges(self) -> None:
        with pytest.raises(ValidationError, match="default_return"):
            OrchestratorConfig(agents=[AgentConfig(name="solo", type="custom", description="d")])

    def test_self_edge_is_rejected(self) -> None:
        data = _config(topology={"edges": [{"from_agent": "worker", "to_agent": "worker"}]})
        with pytest.raises(ConfigValidationError, match=r"edges\[0\]: 'worker' routes to itself"):
            load_config_from_dict(data)

    def test_all_problems_are_reported_together(self) -> None:
        edges = [
            {"from_agent": "supervisor", "to_agent": "a"},
            {"from_agent": "b", "to_agent": "worker"},
        ]
        data = _config(topology={"edges": edges, "default_return": "c"})
        with pytest.raises(ConfigValidationError) as info:
            load_config_from_dict(data)
        for fragment in ("edges[0].to_agent", "edges[1].from_agent", "default_return"):
            assert fragment in str(info.value)

    def test_agents_are_required_and_non_empty(self) -> None:
        with pytest.raises(ConfigValidationError, match="agents"):
            load_config_from_dict({"agents": []})
        with pytest.raises(ConfigValidationError, match="agents: Field required"):
            load_config_from_dict({"topology": {}})


class TestLoader:
    def test_load_from_string(self) -> None:
        config = load_config_from_string(MINIMAL_YAML)
        assert [a.name for a in config.agents] == ["supervisor", "greeter"]
        assert config.topology.edges[0] == TopologyEdgeConfig(
            from_agent="supervisor", to_agent="greeter"
        )
        assert config.session.enabled is False

    @pytest.mark.parametrize("as_str", [True, False])
    def test_load_file_accepts_str_and_path(self, tmp_path: Path, as_str: bool) -> None:
        path = tmp_path / "config.yaml"
        path.write_text(MINIMAL_YAML, encoding="utf-8")
        config = load_config(str(path) if as_str else path)
        assert config == load_config_from_string(MINIMAL_YAML)

    def test_missing_file_raises_config_load_error(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigLoadError, match="not found") as info:
            load_config(tmp_path / "absent.yaml")
        assert not isinstance(info.value, FileNotFoundError)

    def test_directory_is_unreadable(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigLoadError, match="cannot read"):
            load_config(tmp_path)

    def test_non_utf8_file_is_unreadable(self, tmp_path: Path) -> None:
        path = tmp_path / "latin1.yaml"
        path.write_bytes("agents: caf\xe9".encode("latin-1"))
        with pytest.raises(ConfigLoadError, match="cannot read"):
            load_config(path)

    def test_relative_str_path(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        (tmp_path / "config.yaml").write_text(MINIMAL_YAML, encoding="utf-8")
        monkeypatch.chdir(tmp_path)
        assert load_config("config.yaml").agents[1].name == "greeter"

    def test_invalid_yaml_raises_config_load_error(self) -> None:
        with pytest.raises(ConfigLoadError, match="not valid YAML"):
            load_config_from_string("agents: [unclosed")

    @pytest.mark.parametrize(("text", "match"), [("", "empty"), ("- a\n- b", "mapping, not list")])
    def test_non_mapping_content(self, text: str, match: str) -> None:
        with pytest.raises(ConfigValidationError, match=match):
            load_config_from_string(text)

    def test_dict_loader_rejects_non_mapping(self) -> None:
        with pytest.raises(ConfigValidationError, match="mapping"):
            load_config_from_dict(["agents"])  # type: ignore[arg-type]

    def test_validation_error_keeps_structured_errors_and_cause(self) -> None:
        with pytest.raises(ConfigValidationError) as info:
            load_config_from_dict(_config(retry={"max_attempts": 0}))
        assert "retry.max_attempts" in str(info.value)
        assert info.value.errors[0]["loc"] == ("retry", "max_attempts")
        assert isinstance(info.value.__cause__, ValidationError)

    def test_loader_errors_are_the_graph_exceptions(self) -> None:
        assert ConfigLoadError is exc_module.ConfigLoadError
        assert ConfigValidationError is exc_module.ConfigValidationError
        assert issubclass(ConfigValidationError, exc_module.ConfigurationError)
        assert issubclass(ConfigLoadError, exc_module.OrchestratorError)
        assert issubclass(ConfigValidationError, DeskworkConfigurationError)
