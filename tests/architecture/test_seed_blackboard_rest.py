"""The blackboard architecture reference's items no other test checks: the documented default
texts and settings, custom member instructions, and the board and entry defaults."""

from __future__ import annotations

from datetime import timedelta

from bbkit import Model, make_desk, worker

from deskwork import Job
from deskwork.architecture.blackboard import (
    DEFAULT_COORDINATOR_INSTRUCTIONS,
    DEFAULT_DECIDER_INSTRUCTIONS,
    Blackboard,
    BlackboardArchitecture,
    BlackboardEntry,
)
from deskwork.testing import structured

DOC_COORDINATOR = """You coordinate a team of specialist agents on a shared problem.

Read the blackboard state below and decide:
- Should we terminate now? (Has a satisfactory answer been written?)
- If continuing, which agent should contribute next?
- What specific instruction should that agent receive?

Available agents:
{agents}

Output JSON exactly:
{{"terminate": <bool>, "next_agent": <str|null>, "instruction": <str|null>}}

If terminating, set next_agent and instruction to null.
"""

DOC_DECIDER = """You synthesize the final answer from a multi-agent blackboard
discussion. Read the blackboard state below and produce the best
answer you can. Cite specific contributions when useful;
acknowledge dissent if it matters.
"""

STOP = structured({"terminate": True, "next_agent": None, "instruction": None})


def test_default_texts_are_the_documented_ones() -> None:
    assert DEFAULT_COORDINATOR_INSTRUCTIONS == DOC_COORDINATOR
    assert DEFAULT_DECIDER_INSTRUCTIONS == DOC_DECIDER


def test_documented_defaults_of_the_architecture() -> None:
    arch = BlackboardArchitecture(agents={"researcher": worker("researcher")})
    assert (arch.name, arch.max_rounds) == ("blackboard", 10)
    assert (arch.coordinator, arch.decider) == (None, None)
    assert arch.coordinator_instructions == DEFAULT_COORDINATOR_INSTRUCTIONS
    assert arch.decider_instructions == DEFAULT_DECIDER_INSTRUCTIONS


async def test_the_decider_gets_the_default_decider_text() -> None:
    model = Model(researcher=["r1"], judge=["final"])
    arch = BlackboardArchitecture(
        agents={"researcher": worker("researcher")}, decider=worker("judge"), max_rounds=1
    )
    report = await make_desk(model).arun(arch, Job(input="q"))
    assert report.content == "final"
    judge_messages = model.seen[-1][1]
    assert judge_messages[1] == {"role": "system", "content": DEFAULT_DECIDER_INSTRUCTIONS}


async def test_custom_coordinator_and_decider_instructions_are_used() -> None:
    model = Model(coord=[structured({"terminate": False, "next_agent": "critic"}), STOP])
    arch = BlackboardArchitecture(
        agents={"critic": worker("critic")},
        coordinator=worker("coord"),
        decider=worker("judge"),
        coordinator_instructions="Pick one of:\n{agents}\nAnswer in JSON.",
        decider_instructions="Write the verdict.",
    )
    await make_desk(model).arun(arch, Job(input="q"))
    systems = {name: messages[1]["content"] for name, messages in model.seen}
    assert systems["coord"] == "Pick one of:\n- critic: critic\nAnswer in JSON."
    assert systems["judge"] == "Write the verdict."


def test_a_new_board_and_entry_defaults() -> None:
    board = Blackboard()
    assert (board.public, board.private) == ([], {})
    entry = board.post("researcher", "data says 42")
    assert (entry.author, entry.content, entry.kind) == (
        "researcher",
        "data says 42",
        "contribution",
    )
    assert entry.timestamp.utcoffset() == timedelta(0)
    note = board.post("researcher", "check the units", private_to="researcher")
    assert board.public == [entry]
    assert board.private == {"researcher": [note]}
    plain = BlackboardEntry(author="a", content="c")
    assert plain.kind == "contribution"
