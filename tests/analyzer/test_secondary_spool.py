"""Secondary rows spooled to disk with only 8-byte keys in memory (analyzer/engine/secondary.py)."""

from __future__ import annotations

from array import array

from aitrail.analyzer.engine import secondary
from aitrail.analyzer.engine import sorted_runs as runs_module
from aitrail.analyzer.engine.secondary import KeySet, Spool, kept_runs


def test_keyset_finds_exactly_its_keys():
    keys = KeySet(array("Q", [5, 3, 3, 2**64 - 1, 0]))
    assert len(keys) == 4
    assert all(key in keys for key in (0, 3, 5, 2**64 - 1))
    assert not any(key in keys for key in (1, 4, 6, 2**64 - 2, b"\x00" * 8))


def test_spool_replays_rows_in_order_and_drops_nothing_itself(tmp_path):
    spool = Spool(str(tmp_path / "s.spool"))
    spool.add(7, ("a", "a.s"), True, b"k2", b"line two\n", ("a", "user"))
    spool.add(9, ("b", "b.s"), False, b"k1", b"line one\n", ("b", "system"))
    assert 7 in spool.keys() and 8 not in spool.keys()
    replayed = [(item.dedup, item.stats, item.secondary, item.key, item.line) for item in spool.replay()]
    assert replayed == [(7, ("a", "a.s"), True, b"k2", b"line two\n"), (9, ("b", "b.s"), False, b"k1", b"line one\n")]


def test_kept_rows_are_cut_into_sorted_runs_that_merge_to_one_order(tmp_path):
    items = [(f"{n:06d}".encode()[::-1], f"row {n}\n".encode()) for n in range(5000)]
    runs = kept_runs(iter(items), lambda chunk, number: runs_module.write_run(chunk, str(tmp_path / f"r{number}")),
                     limit=10_000)
    assert len(runs) == 5  # 5000 lines of about 9 bytes, 10 kB a run
    runs_module.merge_range(runs, None, None, str(tmp_path / "merged"))
    assert (tmp_path / "merged").read_bytes() == b"".join(line for _, line in sorted(items))


def test_keyset_built_from_many_chunks_is_sorted_and_distinct(monkeypatch):
    monkeypatch.setattr(secondary, "SORT_CHUNK", 100)
    keys = array("Q", [(n * 7919) % 1000 for n in range(3000)])
    built = KeySet(keys)
    assert list(built._keys) == list(range(1000))


def test_only_rows_of_a_kind_the_secondary_rows_have_are_keyed():
    """A key hashes agent and turn type: a primary row of another kind cannot match, and is not hashed."""
    from aitrail.analyzer.engine.worker import _keyed_turns

    keys = KeySet(array("Q", [1]), frozenset({("codex", "user"), ("claude-code", "assistant")}))
    assert _keyed_turns(keys, "codex") == {"user"}
    assert _keyed_turns(keys, "grok") is None
    assert _keyed_turns(KeySet(array("Q")), "codex") is None  # no secondary rows at all
    assert "tool_result" in _keyed_turns(KeySet(array("Q", [1])), "codex")  # kinds not known: every turn


def test_the_same_words_about_two_calls_are_two_rows():
    """A secondary refusal of call b is not the primary refusal of call a (it used to be dropped as its copy)."""
    from aitrail.analyzer.view.rows import COLUMNS

    def row(call: str, text: str = "permission decision: denied") -> tuple:
        values = {"agent": "continue", "turn_type": "system", "tool_use_id": call, "text": text,
                  "source": "data/home/.continue/dev_data/0.2.0/toolUsage.jsonl"}
        return tuple(values.get(name, "") for name in COLUMNS)

    assert secondary.dedup_key(row("a")) != secondary.dedup_key(row("b"))
    assert secondary.dedup_key(row("a")) == secondary.dedup_key(row("a", "permission  decision:\tdenied"))
