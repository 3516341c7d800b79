"""The guide's minimal example (section 1.2): a supervisor and a greeter.

    python examples/simple_chatbot/main.py                               # offline, scripted
    python examples/simple_chatbot/main.py --model openai/gpt-4o-mini    # a real model

The guide's version calls ``ChatOpenAI`` directly and runs ``graph.ainvoke``. Here the model is
a :class:`DeskworkChatModel` (any LiteLLM ``provider/model``; a scripted one offline) and the graph
runs through a desk, so the conversation is a stored run with its events (``.deskwork/`` next to
this file).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

import structlog
from agent import GreeterAgent

from deskwork import Desk, Job
from deskwork.graph import (
    DeskworkChatModel,
    GraphRunner,
    SupervisorAgent,
    TopologyResolver,
    load_config,
)
from deskwork.graph.routing.graph_builder import build_hub_spoke_graph
from deskwork.testing import ScriptedAdapter

HERE = Path(__file__).resolve().parent


async def main(model: str | None, message: str, data_dir: Path) -> None:
    config = load_config(HERE / "config.yaml")
    llm = DeskworkChatModel(temperature=0)  # the desk's model
    topology = TopologyResolver(config=config.topology)
    agent_configs = {a.name: a for a in config.agents}
    supervisor = SupervisorAgent(
        config=agent_configs["supervisor"],
        llm=llm,
        topology=topology,
    )
    greeter = GreeterAgent(config=agent_configs["greeter"])
    graph = build_hub_spoke_graph(supervisor, {"greeter": greeter}, topology)

    if model is None:  # the supervisor's two answers: route to the greeter, then finish
        script = ScriptedAdapter(["greeter", "FINISH: The greeter said hello."])
        desk = Desk(model="scripted", adapter=script, storage_dir=data_dir)
    else:
        desk = Desk(model=model, storage_dir=data_dir)
    job = Job(input=message, metadata={"session_id": "s1", "user_id": "alice"})
    report = await desk.arun(GraphRunner(graph, name="simple-chatbot"), job)
    for line in report.messages:
        print(f"{line.name or line.role}: {line.content}")
    print(f"[run {report.run_id}: {report.status}]")


if __name__ == "__main__":
    # the library logs through structlog: keep warnings on stderr, the chat on stdout
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )
    parser = argparse.ArgumentParser(description="The minimal supervisor + greeter graph.")
    parser.add_argument("--model", help="PROVIDER/MODEL (default: offline scripted model)")
    parser.add_argument("--data-dir", type=Path, default=HERE / ".deskwork", help="run store")
    parser.add_argument("message", nargs="?", default="Hello!")
    args = parser.parse_args()
    asyncio.run(main(args.model, args.message, args.data_dir))
