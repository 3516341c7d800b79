"""A scripted model whose calls prove they run at once (imported as a plain module).

Its first ``parties`` calls each wait until all of them have started; calls made one after
another would wait in vain and fail after ``timeout`` seconds. This asserts overlap without
a wall-time bound, which a loaded machine can miss.
"""

from __future__ import annotations

import asyncio
from typing import Any

from deskwork.adapters.base import ModelResult
from deskwork.testing import ScriptedAdapter


class GatedAdapter(ScriptedAdapter):
    """A :class:`ScriptedAdapter` whose first ``parties`` calls meet before any answers."""

    def __init__(self, parties: int, *args: Any, timeout: float = 30, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.parties = parties
        self.timeout = timeout
        self._arrived = 0
        self._all_in = asyncio.Event()

    async def acomplete(self, **kwargs: Any) -> ModelResult:
        self._arrived += 1
        if self._arrived >= self.parties:
            self._all_in.set()
        await asyncio.wait_for(self._all_in.wait(), self.timeout)
        return await super().acomplete(**kwargs)
