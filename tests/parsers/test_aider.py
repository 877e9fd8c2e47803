"""Aider parsers, one rule per test (docs/agents/aider.md)."""

from __future__ import annotations

from pathlib import Path

from tests.analyzer.fakes import FakeBundle, drafts
from tests.test_golden import frozen_copy

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "aider"
CHAT, INPUT, LLM, CONF = ".aider.chat.history.md", ".aider.input.history", ".aider.llm.history", ".aider.conf.yml"
HEADER = "\n# aider chat started at 2026-07-02 11:14:02\n\n"


def status(*lines: str) -> str:
    return "".join(f"> {line}  \n" for line in lines)


def user(*lines: str) -> str:
    return "\n" + "".join(f"#### {line}  \n" for line in lines)


def reply(text: str) -> str:
    return "\n" + text + "\n\n"


def chat_rows(text: str, history: str | None = None):
    files = {("aider.chat_history", CHAT): text.encode()}
    if history is not None:
        files[("aider.input_history", INPUT)] = history.encode()
    return drafts(FakeBundle(files), CHAT, "aider.chat_history.v1")


def shown(rows) -> list[tuple[str, str]]:
    return [(row.turn_type, row.text) for row in rows]


# -- .aider.chat.history.md ------------------------------------------------------------------------


def test_a_prompt_of_several_lines_is_one_user_row_and_a_reply_one_assistant_row():
    rows = chat_rows(HEADER + user("first line", "second line") + reply("The answer.\n\nSecond paragraph."))
    assert shown(rows)[1:] == [("user", "first line\nsecond line"),
                               ("assistant", "The answer.\n\nSecond paragraph.")]


def test_a_quote_in_a_reply_without_the_hard_break_stays_in_the_reply():
    rows = chat_rows(HEADER + user("q") + reply("Before.\n\n> quoted\nstill quoted\n\nAfter.") + status("done"))
    assert shown(rows)[2:] == [("assistant", "Before.\n\n> quoted\nstill quoted\n\nAfter."), ("system", "output: done")]


def test_a_heading_in_a_reply_is_not_a_prompt():
    rows = chat_rows(HEADER + user("q") + reply("#### Step 1\nDo it."))
    assert [row.turn_type for row in rows] == ["system", "user", "assistant"]


def test_the_header_opens_a_run_named_by_its_local_time_and_a_second_in_the_same_second_is_numbered():
    rows = chat_rows(HEADER + user("a") + HEADER + user("b"))
    assert [(row.turn_type, row.session_id) for row in rows] == [
        ("system", "2026-07-02 11:14:02"), ("user", "2026-07-02 11:14:02"),
        ("system", "2026-07-02 11:14:02#2"), ("user", "2026-07-02 11:14:02#2")]
    assert rows[0].text == "session start: aider chat started at 2026-07-02 11:14:02 (local time, no zone recorded)"


def test_no_row_of_the_transcript_is_given_a_time():
    rows = chat_rows(HEADER + status("Model: gpt-4o with diff edit format") + user("a") + reply("b"))
    assert {(row.timestamp_ns, row.timestamp_source) for row in rows} == {(None, "none")}


def test_the_banner_is_a_model_row_and_a_new_banner_in_the_run_a_change():
    rows = chat_rows(HEADER + status("Main model: m1 with diff edit format, prompt cache") + user("a") + reply("b")
                     + status("Main model: m2 with whole edit format") + reply("c"))
    assert [row.text for row in rows if row.text.startswith("model:")] == [
        "model: m1 (Main model: m1 with diff edit format, prompt cache)",
        "model: m1 -> m2 (Main model: m2 with whole edit format)"]
    assert [row.model for row in rows if row.turn_type == "assistant"] == ["m1", "m2"]


def test_streamed_reasoning_tags_give_a_thinking_row_before_the_reply():
    tag = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"
    rows = chat_rows(HEADER + user("a") + reply(f"<{tag}>\n\nweighing it\n\n</{tag}>\n\nThe answer."))
    assert shown(rows)[2:] == [("thinking", "weighing it"), ("assistant", "The answer.")]


def test_a_models_own_think_tags_give_a_thinking_row_and_a_reply_cut_in_its_reasoning_only_thinking():
    rows = chat_rows(HEADER + user("a") + reply("<think>\nhmm\n</think>\n\nok") + user("b") + reply("<think>\ncut"))
    assert [(row.turn_type, row.text) for row in rows if row.turn_type in ("thinking", "assistant")] == [
        ("thinking", "hmm"), ("assistant", "ok"), ("thinking", "cut")]


def test_a_token_report_with_its_cost_on_the_next_line_is_one_tokens_row():
    rows = chat_rows(HEADER + status("Model: m with diff edit format")
                     + "> Tokens: 8.1k sent, 120 received.\nCost: $0.03 message, $0.05 session.  \n")
    assert rows[-1].text == ("tokens generated: model=m sent=8.1k received=120 cost_message=$0.03 "
                             "cost_session=$0.05 (Aider's rounded counts)")


def test_answers_to_questions_are_permission_decisions_by_their_letter():
    rows = chat_rows(HEADER + status("Attempt to fix lint errors? (Y)es/(N)o [Yes]: y",
                                     "Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: d",
                                     "Add URL to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: s"))
    assert [row.text.split(" (", 1)[0] for row in rows[1:]] == [
        "permission decision: approved", "permission decision: denied", "permission decision: denied"]
    assert "(don't ask again this run)" in rows[2].text and "(skip all of this group)" in rows[3].text


def test_the_subject_is_named_only_for_questions_asked_about_one():
    rows = chat_rows(HEADER + status("pytest -q", "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y",
                                     "Running pytest -q",
                                     "Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: n"))
    decisions = [row for row in rows if row.text.startswith("permission decision:")]
    assert decisions[0].text.endswith('answered "y"; about: pytest -q)') and decisions[0].tool_name == "run"
    assert "about:" not in decisions[1].text and decisions[1].tool_name == ""


def test_a_subject_of_several_lines_keeps_its_bare_later_lines():
    rows = chat_rows(HEADER + "> make build     \nmake test  \n"
                     + status("Run shell commands? (Y)es/(N)o/(D)on't ask again [Yes]: n"))
    assert rows[-1].text.endswith("about: make build\nmake test)")


def test_an_answer_written_as_a_prompt_by_an_earlier_choice_is_not_a_user_row():
    rows = chat_rows(HEADER + user("Add URL to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all"))
    assert [row.turn_type for row in rows] == ["system", "system"] and rows[1].text.startswith("auto answer: ")


def test_edits_and_commands_aider_ran_are_tool_use_rows_without_ids():
    rows = chat_rows(HEADER + status("Applied edit to src/app.py", "Running make test",
                                     "Commit 3b9e0c7 fix: the thing"))
    assert [(row.turn_type, row.tool_name, row.text, row.tool_use_id) for row in rows[1:]] == [
        ("tool_use", "edit", '{"path":"src/app.py"}', ""), ("tool_use", "run", '{"command":"make test"}', ""),
        ("system", "", "commit: 3b9e0c7 fix: the thing", "")]


def test_typed_commands_that_run_something_add_a_tool_use_row():
    rows = chat_rows(HEADER + user("/run pytest -q") + user("!ls -la") + user("/git log -3") + user("/test make t")
                     + user("/web https://example.com/x") + user("/add app.py") + user("/run"))
    calls = [(row.tool_name, row.text) for row in rows if row.turn_type == "tool_use"]
    assert calls == [("run", '{"command":"pytest -q"}'), ("run", '{"command":"ls -la"}'),
                     ("git", '{"command":"git log -3"}'), ("test", '{"command":"make t"}'),
                     ("web", '{"url":"https://example.com/x"}')]
    assert len([row for row in rows if row.turn_type == "user"]) == 7


def test_consecutive_plain_output_lines_are_one_row_and_ctrl_c_an_interrupted_row():
    rows = chat_rows(HEADER + status("Aider v0.86.2", "Git repo: none", "", "", "^C KeyboardInterrupt"))
    assert shown(rows)[1:] == [("system", "output: Aider v0.86.2\nGit repo: none"),
                               ("system", "interrupted: ^C KeyboardInterrupt (the user stopped the reply)")]


def test_lines_ending_in_crlf_are_read_as_their_lf_twins():
    text = HEADER + user("a") + reply("b") + status("Applied edit to x.py")
    assert shown(chat_rows(text.replace("\n", "\r\n"))) == shown(chat_rows(text))


def test_damaged_lines_are_parser_rows_and_the_lines_around_them_are_read():
    data = (HEADER + user("a")).encode() + b"\nok\n\xff\xfe\nstill\n\n" + b"\x00" * 10 + b"\n" + status("x").encode()
    rows = drafts(FakeBundle({("aider.chat_history", CHAT): data + b"> torn"}), CHAT, "aider.chat_history.v1")
    parser = [row.text.split(":", 2)[1].strip() for row in rows if row.text.startswith("parser:")]
    assert parser == ["unparseable line (not UTF-8 at byte 0)", "unparseable line (NUL bytes (a zero-filled tail or a "
                      "damaged block))", "unparseable line (torn last line, no newline; kept in its write)"]
    assert ("assistant", "ok\nstill") in shown(rows)


def test_rows_before_the_first_header_belong_to_no_run():
    rows = chat_rows(user("a") + reply("b"))
    assert [(row.turn_type, row.session_id) for row in rows] == [("user", ""), ("assistant", "")]


# -- .aider.input.history and its join with the transcript ---------------------------------------------


def entry(when: str, *lines: str) -> str:
    return f"\n# {when}\n" + "".join(f"+{line}\n" for line in lines)


def input_rows(text: bytes | str):
    data = text.encode() if isinstance(text, str) else text
    return drafts(FakeBundle({("aider.input_history", INPUT): data}), INPUT, "aider.input_history.v1")


def test_each_entry_is_a_user_row_then_its_local_time_unconverted():
    rows = input_rows(entry("2026-07-02 11:14:40.512093", "fix it", "and test"))
    typed = "prompt typed: 2026-07-02 11:14:40.512093 (local time, no zone; .aider.input.history line 3)"
    assert shown(rows) == [("user", "fix it\nand test"), ("system", typed)]
    assert {row.timestamp_source for row in rows} == {"none"} and rows[0].locator == "line:3"


def test_the_transcript_dates_a_prompt_with_the_same_row_the_input_history_gives_oldest_entry_first():
    history = entry("2026-07-02 10:00:00.000001", "again") + entry("2026-07-02 11:00:00.000002", "again")
    rows = chat_rows(HEADER + user("again") + user("again") + user("again"), history)
    typed = [row.text for row in rows if row.text.startswith("prompt typed:")]
    assert typed == [text for _, text in shown(input_rows(history)) if text.startswith("prompt typed:")]
    assert "10:00:00.000001" in typed[0] and "11:00:00.000002" in typed[1]


def test_the_join_ignores_whitespace_differences_and_is_absent_without_the_input_history():
    rows = chat_rows(HEADER + user("fix   the", "bug"), entry("2026-07-02 10:00:00", "fix the bug"))
    assert rows[2].text.startswith("prompt typed: 2026-07-02 10:00:00 ")
    assert not [row for row in chat_rows(HEADER + user("fix the bug")) if row.text.startswith("prompt typed:")]


def test_file_history_damage_gives_parser_rows_and_the_entries_are_read():
    data = (entry("2026-07-02 10:00:00", "one") + "# not a time\nstray\n\n# 2026-07-02 10:01:00\n"
            + entry("2026-07-02 10:02:00", "two")).encode() + b"\x00\x00\n+three"
    rows = input_rows(data)
    assert [text for kind, text in shown(rows) if kind == "user"] == ["one", "two", "three"]
    reasons = [row.text.split("(", 1)[1].split(")", 1)[0] for row in rows if row.text.startswith("parser:")]
    assert reasons == ["a # comment that is not a time", "neither a + line of an entry nor a # time comment",
                       "a time with no entry after it", "NUL bytes (a zero-filled tail or a damaged block",
                       "torn last line, no newline; the entry is read as it stands"]


# -- .aider.llm.history ------------------------------------------------------------------------------


def test_llm_records_are_model_request_and_completion_rows_with_the_local_time_quoted():
    data = "TO LLM 2026-07-02T11:14:41\n-------\nUSER hi\nLLM RESPONSE 2026-07-02T11:14:52\nASSISTANT a\nASSISTANT \n"
    rows = drafts(FakeBundle({("aider.llm_history", LLM): data.encode()}), LLM, "aider.llm_history.v1")
    assert shown(rows) == [
        ("system", "model request: sent at 2026-07-02T11:14:41 (local time, no zone):\n-------\nUSER hi"),
        ("system", "model completion: received at 2026-07-02T11:14:52 (local time, no zone):\na\n")]
    assert [row.timestamp_source for row in rows] == ["none", "none"]


def test_text_before_the_first_llm_record_is_one_parser_row():
    rows = drafts(FakeBundle({("aider.llm_history", LLM): b"a\nb\nTO LLM 2026-07-02T11:14:41\nUSER x\n"}), LLM,
                  "aider.llm_history.v1")
    assert [row.text[:40] for row in rows] == ["parser: unparseable line (text before th",
                                               "model request: sent at 2026-07-02T11:14:"]


# -- .aider.conf.yml ----------------------------------------------------------------------------------


def config_rows(text: str):
    return drafts(FakeBundle({("aider.config", CONF): text.encode()}), CONF, "aider.config.v1")


def test_the_yolo_flag_and_approval_options_are_permission_settings_and_model_a_model_row():
    rows = config_rows("yes-always: true\nauto-commits: false\nmodel: gpt-4o\ndark-mode: true\n")
    assert [row.text for row in rows] == [
        "permission setting: yes-always=true (from .aider.conf.yml)",
        "permission setting: auto-commits=false (from .aider.conf.yml)",
        "model: gpt-4o (the default model, from .aider.conf.yml)",
        "setting: dark-mode=true (from .aider.conf.yml)"]
    assert {row.timestamp_source for row in rows} == {"file-mtime"}


def test_credential_values_of_the_config_never_reach_a_row():
    rows = config_rows("anthropic-api-key: SECRETVALUE1\napi-key: [openai=SECRETVALUE2]\n"
                       "set-env:\n  - MY_VAR=SECRETVALUE3\nopenai-api-key: [SECRETVALUE4]\n")
    assert not [row for row in rows if "SECRETVALUE" in row.text]
    assert rows[1].text == 'setting: api-key=["openai=[withheld: a credential, 12 characters]"] (from .aider.conf.yml)'
    assert rows[2].text.startswith('setting: set-env=["MY_VAR=[withheld')


def test_a_config_that_is_not_a_mapping_is_one_parser_row():
    assert [row.text[:31] for row in config_rows("- a\n- b\n")] == ["parser: unparseable file (.aide"]


def test_no_fake_credential_of_the_fixture_reaches_the_bundle_the_timeline_or_the_report(cli, tmp_path):
    """The planted keys: in the collected config (withheld in rows) and in .env / oauth-keys.env (never collected)."""
    from tests.conftest import all_decompressed

    home = frozen_copy(FIXTURES / "config-credentials" / "home", tmp_path / "home")
    bundle = tmp_path / "b.tar.zst"
    assert cli("collect", "--home", home, "-o", bundle, "--quiet").exit_code == 0
    outputs = {}
    for name, args in (("t.csv", ("--format", "csv")), ("t.jsonl", ("--format", "jsonl"))):
        assert cli("analyze", bundle, "-o", tmp_path / name, "--quiet", *args).exit_code == 0
        outputs[name] = (tmp_path / name).read_bytes()
    assert cli("report", bundle, "-o", tmp_path / "r.html", "--jobs", "1").exit_code == 0
    outputs["r.html"] = (tmp_path / "r.html").read_bytes()
    planted = (b"sk-FAKE-openai", b"AIzaFAKE-gemini", b"sk-or-FAKE-2222", b"sk-ant-FAKE", b"sk-or-v1-FAKE")
    for name, data in outputs.items():
        assert not [value for value in planted if value in data], name
    assert b"yes-always=true" in outputs["t.csv"]
    collected = all_decompressed(bundle)
    assert b"sk-ant-FAKE" not in collected and b"sk-or-v1-FAKE" not in collected
