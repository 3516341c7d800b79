"""What importing deskwork and running a desk load (each case in a fresh interpreter).

``import deskwork`` loads the package alone; a name loads its module on first use. A desk
whose runs never call a model never imports LiteLLM, even with the default adapter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

_NO_MODEL_CALL = """
import json, sys
from deskwork import Desk, Job, Report, RunState, Worker
from deskwork.adapters import LiteLLMAdapter
from deskwork.testing import ScriptedAdapter, reply


class Echo:
    name, runner_type = "echo", "echo"

    async def arun(self, config, job):
        assert isinstance(config.adapter, LiteLLMAdapter)  # the default adapter, made
        state = RunState(run_id=config.run_id, status="completed", runner_type="echo",
                         runner_name="echo", job=job.to_state())
        return Report(run_id=config.run_id, status="completed", content=str(job.input)), state

    async def aresume(self, config, state, decision, job=None):
        raise AssertionError("not paused")


desk = Desk(model="openai/gpt-5-nano", storage_dir=sys.argv[1])
echo = desk.run(Echo(), Job(input="hi"))
scripted = Desk(model="m", adapter=ScriptedAdapter([reply("ok")]), storage_dir=sys.argv[1])
worker = scripted.run(Worker(name="w"), Job(input="hi"))
print(json.dumps([echo.status, echo.content, worker.status, "litellm" in sys.modules]))
"""


def _run(code: str, *args: str) -> Any:
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_deskwork_loads_the_package_alone() -> None:
    loaded = _run(
        "import json, sys\n"
        "had_typing = 'typing' in sys.modules\n"  # a site hook may have loaded it
        "import deskwork\n"
        "names = sorted(m for m in sys.modules if m.startswith(('deskwork', 'pydantic')))\n"
        "print(json.dumps([names, had_typing or 'typing' not in sys.modules]))"
    )
    assert loaded == [["deskwork", "deskwork._lazy"], True]


def test_a_name_loads_its_module_on_first_use_and_dir_lists_every_name() -> None:
    loaded = _run(
        "import json, sys, deskwork\n"
        "listed = set(deskwork.__all__) <= set(dir(deskwork))\n"
        "before = 'deskwork.runtime.desk' in sys.modules\n"
        "desk = deskwork.Desk\n"
        "print(json.dumps([listed, before, desk.__module__, 'Desk' in vars(deskwork)]))"
    )
    assert loaded == [True, False, "deskwork.runtime.desk", True]


# What importing the public names must not load: asyncio (with concurrent.futures, logging,
# ssl, ...) comes with the first run; the rest only with the feature that needs it.
_NOT_AT_IMPORT = [
    "asyncio",
    "concurrent.futures",
    "logging",
    "ssl",
    "subprocess",
    "sqlite3",
    "httpx",
    "jinja2",
    "litellm",
    "instructor",
    "numpy",
    "chromadb",
    "pydantic.networks",
    "pydantic.type_adapter",  # structured output's: schema_adapter and ResponseSchema load it
    "json",  # its decoder compiles patterns at import; the first run (or value) loads it
    "email",
]


def test_importing_desk_worker_and_job_loads_no_runtime_extras() -> None:
    loaded = _run(
        "import sys\n"
        "from deskwork import Desk, Job, Worker\n"
        f"loaded = [m for m in {_NOT_AT_IMPORT!r} if m in sys.modules]\n"
        "import json\n"  # after the check: json is on the list
        "print(json.dumps(loaded))"
    )
    assert loaded == []


_PLAIN_RUN = """
import json, sys
from deskwork import Desk, Job, Worker
from deskwork.adapters import BaseModelAdapter, ModelResponse


class Hello(BaseModelAdapter):
    async def acomplete(self, **kwargs):
        return ModelResponse(content="hello")


before = "asyncio" in sys.modules
report = Desk(model="m", adapter=Hello(), storage_dir=sys.argv[1]).run(
    Worker(name="w"), Job(input="hi")
)
print(json.dumps([before, report.status, report.content, "asyncio" in sys.modules]))
"""


def test_importing_the_other_runners_builds_no_model_schema() -> None:
    # a schema build (and Pydantic's plugin discovery, which reads every installed package's
    # metadata) waits for the first validation; importing a feature must not pay for it
    built = _run(
        "import json, sys\n"
        "from pydantic import BaseModel\n"
        "from deskwork import Desk, Job, Worker, Workforce\n"
        "import deskwork.architecture, deskwork.evals, deskwork.tools.subworkers\n"
        "def subclasses(cls):\n"
        "    for sub in cls.__subclasses__():\n"
        "        yield sub\n"
        "        yield from subclasses(sub)\n"
        "names = sorted(c.__name__ for c in subclasses(BaseModel) if c.__pydantic_complete__)\n"
        "print(json.dumps([names, 'pydantic.plugin._loader' in sys.modules]))"
    )
    assert built == [[], False]


def test_a_plain_run_loads_asyncio_itself(tmp_path: Path) -> None:
    assert _run(_PLAIN_RUN, str(tmp_path)) == [False, "completed", "hello", True]


def test_the_tools_alone_do_not_load_the_desk() -> None:
    loaded = _run(
        "import json, sys\n"
        "from deskwork.tools import tool\n"
        "print(json.dumps(['deskwork.runtime.desk' in sys.modules, 'litellm' in sys.modules]))"
    )
    assert loaded == [False, False]


def test_runs_that_never_call_litellm_never_import_it(tmp_path: Path) -> None:
    assert _run(_NO_MODEL_CALL, str(tmp_path)) == ["completed", "hi", "completed", False]


# What a worker program's import leaves to the first run: the worker loop and its steps, the
# adapter base (ModelResponse and the structured-output pipeline), the pool's queue, the
# default memory store, and pydantic's TypeAdapter (only structured output uses it).
_FIRST_RUN_LOADS = [
    "deskwork.runtime._worker_loop",
    "deskwork.runtime._model_step",
    "deskwork.runtime._tool_step",
    "deskwork.runtime._run",
    "deskwork.runtime.steps",
    "deskwork.runtime.config",
    "deskwork.core.state",
    "deskwork.adapters.base",
    "deskwork.tools.execution",
    "deskwork.memory.simple",
    "queue",
]


def test_importing_desk_worker_and_job_leaves_the_run_machinery_to_the_first_run(
    tmp_path: Path,
) -> None:
    loaded = _run(
        "import json, sys\n"
        "from deskwork import Desk, Job, Worker\n"
        f"names = {_FIRST_RUN_LOADS!r}\n"
        "at_import = [m for m in names if m in sys.modules]\n"
        "from deskwork.adapters import BaseModelAdapter, ModelResponse\n"
        "class Hello(BaseModelAdapter):\n"
        "    async def acomplete(self, **kwargs):\n"
        "        return ModelResponse(content='hello')\n"
        "from deskwork.store import InMemoryRunStore\n"
        "desk = Desk(model='m', adapter=Hello(), run_store=InMemoryRunStore(),"
        " storage_dir=sys.argv[1])\n"
        "report = desk.run(Worker(name='w'), Job(input='hi'))\n"
        "after_run = [m for m in names if m not in sys.modules]\n"
        "print(json.dumps([at_import, report.content, after_run]))",
        str(tmp_path),
    )
    assert loaded == [[], "hello", []]


def test_every_public_model_builds_its_schema_from_a_bare_import() -> None:
    # models defer their schema build; a name imported only for type checkers (as the lazy
    # imports above do) would fail that build at the first validation, so build them all
    built = _run(
        "import json, deskwork, deskwork.adapters, deskwork.core\n"
        "from pydantic import BaseModel\n"
        "names = []\n"
        "for package in (deskwork, deskwork.core, deskwork.adapters):\n"
        "    for name in package.__all__:\n"
        "        value = getattr(package, name)\n"
        "        if isinstance(value, type) and issubclass(value, BaseModel):\n"
        "            value.model_rebuild(force=True, raise_errors=True)\n"
        "            names.append(value.__name__)\n"
        "print(json.dumps(sorted(set(names))))"
    )
    assert {"Job", "Event", "Message", "ModelResponse", "Report", "RunState", "ToolCall"} <= set(
        built
    )
