"""A primary database's secondary rows that repeat its own primary rows: dropped, in the file's parse.

A parser of a live database can also read what the database held before:
the rows of each earlier WAL commit (formats/sqlite_history.py), a side copy
kept in another key. It gives those rows ``origin="secondary"``. The engine's
cross-store dedup (engine/secondary.py) compares the rows of secondary
*stores* with every primary row; the secondary rows of a primary store are
compared here with the primary rows of the same file, which is where their
repeats are: the earlier version of a rewritten conversation repeats every
turn the live version still holds. What is left is what only an earlier
version holds, counted once.

"The same row" is the engine's (turn type, tool_use_id and whitespace-normalized
text; the file fixes agent and location) within one session: a deleted
thread's ``model:`` or project row is not dropped because a live thread of the
same file says the same. An earlier version's ``parser: no result recorded for
tool call <id>`` is dropped too when the file's rows (live or of another earlier
version) hold that call's result: the version was written before the result
came, which is no finding. The secondary rows wait for the end
of the file, since the live rows may come after them; at most HELD_MAX wait,
and past it the rest are written as they come (a repeat, never a loss) after
one ``parser:`` row that says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from aitrail.analyzer.view.rows import Draft, over_limit

HELD_MAX = 100_000  # secondary rows held until the file's end (a few hundred bytes each)


NO_RESULT = "parser: no result recorded for tool call "


def _same(draft: Draft) -> tuple[str, str, str, str]:
    return draft.session_id, draft.turn_type, draft.tool_use_id, " ".join(draft.text.split())


def _answered(draft: Draft) -> tuple[str, str]:
    return draft.session_id, draft.tool_use_id


def without_own_repeats(drafts: Iterable[Draft]) -> Iterator[Draft]:
    """The drafts, the secondary ones last and without those that repeat a primary draft of the same file."""
    seen: set[int] = set()
    answered: set[int] = set()
    held: list[Draft] = []
    over = False
    for draft in drafts:
        if draft.origin != "secondary":
            seen.add(hash(_same(draft)))
            if draft.turn_type == "tool_result" and draft.tool_use_id:
                answered.add(hash(_answered(draft)))
            yield draft
        elif len(held) < HELD_MAX:
            held.append(draft)
        else:
            if not over:
                over = True
                yield over_limit("secondary rows held to compare with the live rows", f"{HELD_MAX} rows",
                                 "the rest are written without the comparison", draft.locator)
            yield draft
    for draft in held:  # a result only a later earlier version holds answers the call too
        if draft.turn_type == "tool_result" and draft.tool_use_id:
            answered.add(hash(_answered(draft)))
    for draft in held:
        if hash(_same(draft)) in seen:
            continue
        if draft.text.startswith(NO_RESULT) and draft.tool_use_id and hash(_answered(draft)) in answered:
            continue
        yield draft
