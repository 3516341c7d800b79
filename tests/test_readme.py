"""The README's code blocks stay valid; the realtime example runs offline."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from deskwork.testing import ScriptedAdapter

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_every_python_block_compiles() -> None:
    assert len(BLOCKS) >= 4
    for block in BLOCKS:
        compile(block, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


async def test_realtime_example_runs_with_a_scripted_model(capsys: object) -> None:
    (block,) = [b for b in BLOCKS if "deskwork.realtime" in b]
    reply = {"has_insight": True, "content": "Anchor on value, then offer a pilot."}
    code = block.replace(
        "engine = AgentEngine()", "engine = AgentEngine(adapter=ScriptedAdapter(default=REPLY))"
    )
    assert code != block
    body = "\n".join("    " + line for line in code.splitlines())
    namespace = {"ScriptedAdapter": ScriptedAdapter, "REPLY": json.dumps(reply)}
    exec(f"async def example():\n{body}\n    return response\n", namespace)
    response = await namespace["example"]()  # type: ignore[operator]
    assert [i.content for i in response.insights] == [reply["content"]]
