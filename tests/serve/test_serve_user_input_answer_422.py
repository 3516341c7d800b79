"""A user input resumed over HTTP with an answer its tool does not take (a number for a text
parameter) is refused with 422 and the run stays paused, as a confirmation's answer of the
wrong shape is: the resume used up the pause, the tool's call failed on the answer and the
person could not answer again."""

from __future__ import annotations

import httpx
from serve_support import Live


async def test_a_user_input_answered_with_the_wrong_type_is_422(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        report = (
            await client.post("/runs?wait=true", json={"runner": "asker", "job": {"input": "go"}})
        ).json()
        assert report["pending_action"]["answer_schema"]["type"] == "string"
        run_id = report["run_id"]
        refused = await client.post(f"/runs/{run_id}/resume", json={"decision": 5})
        assert refused.status_code == 422
        assert "5 is not of type 'string'" in refused.json()["detail"]
        record = live.desk.run_store.get_run(run_id)
        assert record is not None and record.status == "paused"
        answered = await client.post(f"/runs/{run_id}/resume?wait=true", json={"decision": "red"})
        assert answered.json()["content"] == "done: red"
