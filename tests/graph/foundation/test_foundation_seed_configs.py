"""The configurations printed in the seed document load and mean what the document says."""

from __future__ import annotations

from deskwork.graph import load_config_from_string

# section 1.4 §1, "Complete YAML example with all sections"
ALL_SECTIONS = """
agents:
  - name: supervisor
    type: supervisor
    description: Routes requests to the right agent
    model: gpt-4o
    knowledge_enabled: true
  - name: researcher
    type: custom
    description: Performs research tasks
topology:
  edges:
    - from_agent: supervisor
      to_agent: researcher
    - from_agent: researcher
      to_agent: supervisor
  default_return: supervisor
context:
  shared_slots:
    max_tokens: 4096
  tiered_slots:
    turn:
      max_tokens: 4096
    session:
      max_tokens: 4096
    long_term:
      max_tokens: 4096
  eviction_strategy: lru
session:
  enabled: true
knowledge:
  enabled: true
  base_dir: llm_resources
  max_total_tokens: 8192
retry:
  initial_interval: 0.5
  backoff_factor: 2.0
  max_interval: 128.0
  max_attempts: 3
  jitter: true
timeout:
  llm_call_seconds: 30.0
  file_io_seconds: 5.0
  persistence_seconds: 10.0
  total_request_seconds: 120.0
"""

# section 1.5, the DevOps incident response system (mesh topology)
INCIDENT_RESPONSE = """
agents:
  - name: supervisor
    type: supervisor
    description: >-
      Orchestrates the incident response workflow. Routes incoming alerts to
      the monitor for classification.
    knowledge_enabled: true
  - name: monitor
    type: custom
    description: Detects and classifies incidents from raw alert payloads.
  - name: diagnostician
    type: custom
    description: Analyzes classified incidents to determine root cause.
    knowledge_enabled: true
  - name: remediator
    type: custom
    description: Executes remediation playbooks based on diagnosis.
    knowledge_enabled: true
  - name: reporter
    type: custom
    description: Generates structured incident reports and post-mortem documents.
topology:
  edges:
    - {from_agent: supervisor, to_agent: monitor}
    - {from_agent: supervisor, to_agent: diagnostician}
    - {from_agent: supervisor, to_agent: remediator}
    - {from_agent: supervisor, to_agent: reporter}
    - {from_agent: monitor, to_agent: diagnostician}
    - {from_agent: monitor, to_agent: supervisor}
    - {from_agent: diagnostician, to_agent: remediator}
    - {from_agent: diagnostician, to_agent: supervisor}
    - {from_agent: remediator, to_agent: reporter}
    - {from_agent: remediator, to_agent: supervisor}
    - {from_agent: reporter, to_agent: supervisor}
  default_return: supervisor
context:
  shared_slots: {max_tokens: 8192}
  tiered_slots:
    turn: {max_tokens: 4096}
    session: {max_tokens: 8192}
    long_term: {max_tokens: 4096}
  eviction_strategy: lru
session:
  enabled: true
knowledge:
  enabled: true
  base_dir: knowledge
  max_total_tokens: 16384
retry:
  initial_interval: 1.0
  backoff_factor: 2.0
  max_interval: 30.0
  max_attempts: 3
  jitter: true
timeout:
  llm_call_seconds: 30.0
  total_request_seconds: 120.0
"""


def test_all_sections_example() -> None:
    config = load_config_from_string(ALL_SECTIONS)
    supervisor = config.agents[0]
    assert (supervisor.model, supervisor.knowledge_enabled) == ("gpt-4o", True)
    assert config.knowledge.base_dir == "llm_resources"
    assert config.timeout.file_io_seconds == 5.0
    assert config.timeout.persistence_seconds == 10.0


def test_incident_response_example() -> None:
    config = load_config_from_string(INCIDENT_RESPONSE)
    assert [a.name for a in config.agents] == [
        "supervisor",
        "monitor",
        "diagnostician",
        "remediator",
        "reporter",
    ]
    assert len(config.topology.edges) == 11
    assert config.context.tiered_slots.session.max_tokens == 8192
    assert config.knowledge.max_total_tokens == 16384
    assert (config.retry.initial_interval, config.retry.max_interval) == (1.0, 30.0)
    assert config.timeout.file_io_seconds is None
    assert config.agents[0].description.startswith("Orchestrates the incident response")
