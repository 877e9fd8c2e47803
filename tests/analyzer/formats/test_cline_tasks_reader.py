"""The Cline task walk's reader hook (TaskFlavour.reader), on a made-up fork."""

from __future__ import annotations

import json
from collections.abc import Iterator

from aitrail.analyzer.formats.cline_tasks import TaskFlavour, read_task_file, task_id
from aitrail.analyzer.view.rows import Draft
from tests.analyzer.formats.walk import context

API = "tasks/1759400100000/api_conversation_history.json"
HISTORY = [
    {"role": "user", "content": [{"type": "text", "text": "<task>\nfix it\n</task>"}], "ts": 1759400100000},
    {"role": "assistant", "content": [{"type": "text", "text": "<read_file>\n<path>a</path>\n</read_file>"}],
     "ts": 1759400101000, "own": True},
    "not a message",
]


class Reader:
    """Reads messages flagged ``own`` itself, passes the others through, and ends with a row of its own."""

    def __init__(self, messages: list) -> None:
        self.count = len(messages)
        self.seen: list[int] = []

    def rows(self, message: dict, index: int, moment: dict, default: Iterator[Draft]) -> Iterator[Draft]:
        self.seen.append(index)
        if message.get("own"):
            yield Draft("system", f"own reading of message {index}", f"json:/{index}", **moment)
        else:
            yield from default

    def finish(self) -> Iterator[Draft]:
        yield Draft("system", f"finished after {self.seen} of {self.count}", "file")


def rows(flavour: TaskFlavour) -> list[Draft]:
    return list(read_task_file(context({("fork.tasks", API): json.dumps(HISTORY).encode()}, API), flavour))


def test_without_a_reader_the_walk_reads_every_message():
    flavour = TaskFlavour(tool_names=("read_file",), columns=lambda ctx: {"session_id": task_id(ctx)})
    found = rows(flavour)
    assert [row.turn_type for row in found] == ["user", "tool_use", "system", "system"]
    assert found[-1].text == "parser: no result recorded for tool call 1 (read_file)"


def test_a_reader_gets_every_well_formed_message_and_its_default_rows_stay_lazy():
    flavour = TaskFlavour(tool_names=("read_file",), columns=lambda ctx: {"session_id": task_id(ctx)},
                          reader=lambda ctx, messages: Reader(messages))
    found = rows(flavour)
    assert [row.text for row in found] == [
        "fix it", "own reading of message 1",
        "parser: unparseable record (not a user or assistant message): \"not a message\"",
        "finished after [0, 1] of 3"]
    assert found[1].session_id == "1759400100000"  # the moment carries the flavour's columns
    assert not [row for row in found if row.turn_type == "tool_use"]  # the unread default opened no call
