"""Every agent on one home: each agent's rows are exactly the rows it gives alone.

A developer's home holds many agents side by side (Continue *and* PearAI,
Cline *and* Roo Code, Claude Code *and* Codex). A join that is keyed by a
store id alone, or a cache shared by the parsers of a worker, can let one
agent's index answer for another's transcripts; these tests merge the fixture
homes of all agents and compare each agent's rows with its goldens.

Every fixture case is placed in one merged home ("round"): a round holds at
most one case per agent (cases of one agent are different subjects and may
join each other legitimately), and never two cases that write different bytes
at one path. Within a round, the rows of agent X are the multiset union of
the X rows of each case's golden file (a case may hold another agent's files
too). The two-users test puts two rounds side by side as two homes of one
bundle: the rows of each home are that home's rows alone.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.test_golden import cases, frozen, without_bundle_columns

AGENT, SOURCE = 9, 11  # columns of the 17-column timeline


def files_of(home: Path) -> dict[str, bytes | None]:
    """Relative path -> bytes (None for a directory or a link) of every entry under a home."""
    found: dict[str, bytes | None] = {}
    for directory, dirs, names in os.walk(home):
        for name in dirs + names:
            path = Path(directory) / name
            relative = str(path.relative_to(home))
            found[relative] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return found


def fits(placed: dict[str, bytes | None], adding: dict[str, bytes | None]) -> bool:
    """True when no path of ``adding`` holds other bytes (or another kind of entry) in ``placed``."""
    return all(placed[path] == content for path, content in adding.items() if path in placed)


def rounds() -> list[list[Path]]:
    """The fixture cases in merged homes: one case per agent at most, no path written twice differently.

    Cases are taken by their position within their agent (first cases first),
    so every round mixes as many agents as the collisions allow.
    """
    by_agent: dict[str, list[Path]] = {}
    for case in cases():
        by_agent.setdefault(case.parent.name, []).append(case)
    order = sorted(((index, agent, case) for agent, found in by_agent.items() for index, case in enumerate(found)),
                   key=lambda item: (item[0], item[1]))
    placed: list[tuple[list[Path], set[str], dict[str, bytes | None]]] = []
    for _, agent, case in order:
        files = files_of(case / "home")
        for members, agents, tree in placed:
            if agent not in agents and fits(tree, files):
                members.append(case)
                agents.add(agent)
                tree.update(files)
                break
        else:
            placed.append(([case], {agent}, dict(files)))
    return [members for members, _, _ in placed]


ROUNDS = rounds()


def merged_home(members: list[Path], target: Path) -> Path:
    """One home holding every member case's files, all times set to the goldens' instant."""
    target.mkdir(parents=True)
    for case in members:
        shutil.copytree(case / "home", target, symlinks=True, dirs_exist_ok=True)
    return frozen(target)


def rows_of(timeline: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(timeline.decode(), newline="")))[1:]


def golden_rows(case: Path) -> list[list[str]]:
    return rows_of((case / "expected.csv").read_bytes())


def by_agent(rows: list[list[str]]) -> dict[str, Counter]:
    table: dict[str, Counter] = {}
    for row in rows:
        table.setdefault(row[AGENT], Counter())[tuple(row)] += 1
    return table


def expected_by_agent(members: list[Path]) -> dict[str, Counter]:
    table: dict[str, Counter] = {}
    for case in members:
        for agent, rows in by_agent(golden_rows(case)).items():
            table.setdefault(agent, Counter()).update(rows)
    return table


def analyzed(cli, homes: list[Path], tmp_path: Path) -> bytes:
    bundle = tmp_path / "merged.tar.zst"
    result = cli("collect", *(arg for home in homes for arg in ("--home", home)), "-o", bundle, "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    out = tmp_path / "merged.csv"
    result = cli("analyze", bundle, "-o", out, "--quiet", "--jobs", "1")
    assert result.exit_code == 0, result.output + result.stderr
    return without_bundle_columns(out.read_bytes(), bundle)


def differences(expected: dict[str, Counter], produced: dict[str, Counter]) -> list[str]:
    """Rows each agent lost or gained on the merged home (empty when they agree)."""
    lines = []
    for agent in sorted(set(expected) | set(produced)):
        want, got = expected.get(agent, Counter()), produced.get(agent, Counter())
        lines += [f"{agent}: missing {','.join(row)}" for row in sorted((want - got).elements())]
        lines += [f"{agent}: extra   {','.join(row)}" for row in sorted((got - want).elements())]
    return lines


def test_every_case_is_in_a_round_and_rounds_mix_agents():
    placed = [case for members in ROUNDS for case in members]
    assert sorted(placed) == cases()
    agents = {case.parent.name for case in cases()}
    assert len(agents) >= 13
    assert {case.parent.name for case in ROUNDS[0]} == agents  # the first round holds every agent


def test_pearai_and_continue_session_indexes_share_a_round():
    """The regression that named the issue: PearAI's chat rows lost their index time beside Continue's index."""
    together = [members for members in ROUNDS
                if FIXTURES / "pearai" / "chat-session" in members
                and any(case.parent.name == "continue" and (case / "home" / ".continue" / "sessions" /
                                                            "sessions.json").exists() for case in members)]
    assert together, "no round puts PearAI's sessions.json beside Continue's: the property would not see the leak"


@pytest.mark.parametrize("members", ROUNDS, ids=lambda members: "+".join(
    f"{case.parent.name}/{case.name}" for case in members) if len(members) < 3 else f"{len(members)} cases from "
    + ",".join(sorted({case.parent.name for case in members}))[:60])
def test_each_agent_gives_its_own_rows_on_a_merged_home(cli, members: list[Path], tmp_path: Path):
    home = merged_home(members, tmp_path / "home")
    produced = by_agent(rows_of(analyzed(cli, [home], tmp_path)))
    assert differences(expected_by_agent(members), produced) == []


@pytest.mark.parametrize("number", range(len(ROUNDS)),
                         ids=lambda number: f"round{number}+round{(number + 1) % len(ROUNDS)}")
def test_two_users_homes_in_one_bundle_do_not_join(cli, number: int, tmp_path: Path):
    """Round N as alice's home and round N+1 as bob's: each home's rows are its own rows alone.

    A join that looks for its other half in the whole bundle (a history that
    names a session, a task index, a rollout id) finds bob's half for alice.
    """
    first, second = ROUNDS[number], ROUNDS[(number + 1) % len(ROUNDS)]
    homes = [merged_home(first, tmp_path / "alice" / "home"), merged_home(second, tmp_path / "bob" / "home")]
    produced = rows_of(analyzed(cli, homes, tmp_path))
    labels = sorted({row[SOURCE].split("/")[1] for row in produced if row[SOURCE].startswith("data/")})
    assert len(labels) == 2, labels
    for label, members in zip(labels, (first, second), strict=True):
        prefix = f"data/{label}/"
        own = [row[:SOURCE] + [f"data/home/{row[SOURCE][len(prefix):]}"] + row[SOURCE + 1:]
               for row in produced if row[SOURCE].startswith(prefix)]
        assert differences(expected_by_agent(members), by_agent(own)) == [], label
    unplaced = [row for row in produced if not any(row[SOURCE].startswith(f"data/{label}/") for label in labels)]
    assert unplaced == []
