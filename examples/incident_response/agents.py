"""Custom agents for the DevOps Incident Response System.

The monitor and the reporter are plain rules, as in the guide. The diagnostician and the
remediator think in a ReAct loop over their knowledge modules (``knowledge/<agent>/``): they load
the runbook or playbook that fits the incident and act on it.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.runnables import RunnableConfig

from deskwork.graph import (
    AgentResponse,
    BaseAgent,
    OrchestratorState,
    ReactExecutor,
    TerminalActionResult,
)
from deskwork.graph.context.slots import SlotTier
from deskwork.graph.core.exceptions import ReactExecutorNotConfiguredError


class MonitorAgent(BaseAgent):
    """Classifies raw alerts into structured incidents."""

    async def process(
        self,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        # the alert is the last message from the user (the supervisor has spoken since)
        alerts = [m for m in state.get("messages", []) if m.type == "human"]
        alert_text = str(alerts[-1].content) if alerts else "unknown alert"
        severity = "P2"
        service = "unknown"
        category = "infrastructure"
        if "cpu" in alert_text.lower() or "memory" in alert_text.lower():
            category = "resource_exhaustion"
            service = "compute"
        elif "latency" in alert_text.lower() or "timeout" in alert_text.lower():
            category = "performance"
            service = "api-gateway"
        elif "error rate" in alert_text.lower() or "5xx" in alert_text.lower():
            category = "availability"
            service = "web-service"
            severity = "P1"
        classification = {
            "severity": severity,
            "service": service,
            "category": category,
            "raw_alert": alert_text[:500],
        }
        return AgentResponse(
            agent_name=self.name,
            content=f"Incident classified: {severity} {category} on {service}",
            next_agent="diagnostician",
            slots_update={
                "incident_classification": json.dumps(classification),
                "incident_severity": severity,
                "incident_service": service,
            },
            slots_tier={
                "incident_severity": SlotTier.SESSION,
                "incident_service": SlotTier.SESSION,
            },
        )


class DiagnosticianAgent(BaseAgent):
    """Finds the root cause with the runbook of the incident's category (ReAct)."""

    async def process(
        self,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        classification = _json_slot(state, "incident_classification")
        result = await _executor(self).execute(
            str(classification.get("raw_alert", "")),
            {
                "classification": json.dumps(classification),
                "category": classification.get("category", "unknown"),
                "service": classification.get("service", "unknown"),
            },
            config,
            request_id=state.get("request_id"),
        )
        diagnosis = {
            "root_cause": str(result.get("root_cause", "unknown")),
            "recommended_action": str(result.get("recommended_action", "escalate")),
            "confidence": _confidence(result.get("confidence")),
        }
        return AgentResponse(
            agent_name=self.name,
            content=(
                f"Diagnosis: {diagnosis['root_cause']}. "
                f"Recommended: {diagnosis['recommended_action']}"
            ),
            next_agent="remediator",
            slots_update={
                "incident_diagnosis": json.dumps(diagnosis),
                **_loaded_knowledge(result),
            },
            slots_tier={"incident_diagnosis": SlotTier.SESSION},
            token_usage=result.get("_token_usage"),
        )


class RemediatorAgent(BaseAgent):
    """Runs the playbook of the recommended action (ReAct)."""

    async def process(
        self,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        diagnosis = _json_slot(state, "incident_diagnosis")
        recommended_action = str(diagnosis.get("recommended_action", "escalate"))
        result = await _executor(self).execute(
            f"Remediate: {diagnosis.get('root_cause', 'unknown root cause')}",
            {"diagnosis": json.dumps(diagnosis), "recommended_action": recommended_action},
            config,
            request_id=state.get("request_id"),
        )
        status = str(result.get("status", "unknown"))
        remediation = {
            "action_taken": recommended_action,
            "steps": list(result.get("steps", [])),
            "status": status,
        }
        return AgentResponse(
            agent_name=self.name,
            content=f"Remediation {status}: {recommended_action}",
            next_agent="reporter",
            slots_update={
                "incident_remediation": json.dumps(remediation),
                **_loaded_knowledge(result),
            },
            slots_tier={"incident_remediation": SlotTier.SESSION},
            token_usage=result.get("_token_usage"),
        )


class ReporterAgent(BaseAgent):
    """Generates incident reports from the full incident context."""

    async def process(
        self,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        classification = _json_slot(state, "incident_classification")
        diagnosis = _json_slot(state, "incident_diagnosis")
        remediation = _json_slot(state, "incident_remediation")
        steps = "\n".join(f"- {step}" for step in remediation.get("steps", [])) or "- none"
        report = f"""# Incident Report

**Severity:** {classification.get("severity", "P3")}
**Service:** {classification.get("service", "unknown")}

## Root Cause
{diagnosis.get("root_cause", "unknown")}

## Remediation
**Action:** {remediation.get("action_taken", "none")}
**Status:** {remediation.get("status", "unknown")}
{steps}"""
        return AgentResponse(
            agent_name=self.name,
            content=report,
            next_agent=None,  # Terminates the graph
            slots_update={"incident_report": report},
            slots_tier={"incident_report": SlotTier.LONG_TERM},
        )


# -- the remediator's actions (request_slot is built into the ReAct executor) ---------------


async def execute_playbook(
    params: dict[str, Any], state: dict[str, Any], config: RunnableConfig | None = None
) -> tuple[str, dict[str, Any]]:
    """Run the playbook's steps. A dry run here: a real system would call its deploy tooling."""
    steps = params.get("steps")
    if isinstance(steps, str):
        steps = [steps]
    if not isinstance(steps, list) or not steps:
        raise ValueError("steps must be a non-empty list of playbook steps")
    done = [f"{step} (dry run: ok)" for step in map(str, steps)]
    return f"Executed {len(done)} steps: " + "; ".join(done), {"executed_steps": done}


async def complete(
    params: dict[str, Any], state: dict[str, Any], config: RunnableConfig | None = None
) -> tuple[str, dict[str, Any]]:
    """End the remediation loop with its status and the steps executed so far."""
    raise TerminalActionResult(
        {
            "status": str(params.get("status") or "completed"),
            "steps": state.get("executed_steps", []),
        }
    )


REMEDIATOR_ACTIONS = {"execute_playbook": execute_playbook, "complete": complete}


async def diagnose(
    params: dict[str, Any], state: dict[str, Any], config: RunnableConfig | None = None
) -> tuple[str, dict[str, Any]]:
    """The diagnostician's terminal action: the root cause and the recommended action."""
    raise TerminalActionResult(dict(params))


DIAGNOSTICIAN_ACTIONS = {"diagnose": diagnose}


def _executor(agent: BaseAgent) -> ReactExecutor:
    if agent.react_executor is None:
        raise ReactExecutorNotConfiguredError(f"agent {agent.name!r} needs a ReactExecutor")
    return agent.react_executor


def _json_slot(state: OrchestratorState, key: str) -> dict[str, Any]:
    raw = state.get("context_slots", {}).get(key, "{}")
    value = json.loads(raw) if isinstance(raw, str) else raw
    return dict(value) if isinstance(value, dict) else {}


def _confidence(value: Any) -> float:
    try:
        return min(max(float(value), 0.0), 1.0)
    except (TypeError, ValueError):
        return 0.5


def _loaded_knowledge(result: dict[str, Any]) -> dict[str, Any]:
    """Knowledge the loop loaded; ``BaseAgent.invoke`` moves it into ``knowledge_context``."""
    loaded = result.get("_loaded_slot_contents")
    return {"_loaded_slot_contents": loaded} if loaded else {}
