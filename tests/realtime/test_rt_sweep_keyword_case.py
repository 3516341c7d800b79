"""Keywords match case-insensitively in every language a transcript may be in: a German
"Straße" is found in a transcript that spells it "STRASSE" (str.lower keeps "ß")."""

from __future__ import annotations

from rt_support import ScriptAgent, make_context

from deskwork.realtime import AgentEngine, TriggerType
from deskwork.testing import ScriptedAdapter


async def test_keywords_match_by_unicode_case_folding() -> None:
    agent = ScriptAgent(
        "route", trigger_types=[TriggerType.KEYWORD], trigger_keywords=["Straße", "größe"]
    )
    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(agent)
    text = "WELCHE GRÖSSE HAT DIE STRASSE?"
    assert [(a.config.id, k) for a, k in engine.check_keyword_triggers(text)] == [
        ("route", "Straße")
    ]
    await engine.process_turn(
        make_context(text), trigger_type=TriggerType.KEYWORD, trigger_metadata={"text": text}
    )
    assert len(agent.calls) == 1
