"""The greeter of the guide's minimal example."""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig

from deskwork.graph import AgentResponse, BaseAgent, OrchestratorState


class GreeterAgent(BaseAgent):
    async def process(
        self,
        state: OrchestratorState,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        count = state.get("context_slots", {}).get("greeting_count", 0) + 1
        last_msg = state["messages"][-1].content if state["messages"] else ""
        content = f"Hello! This is greeting #{count}. You said: {last_msg}"
        return AgentResponse(
            agent_name=self.name,
            content=content,
            next_agent="supervisor",
            slots_update={"greeting_count": count},
        )
