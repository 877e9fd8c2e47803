r"""Aider: the terminal pair-programming agent whose records are plain files in the project it runs in.

The row rules are those of docs/agents/aider.md. Aider writes its history in
the git root of the project (the working directory outside git), never in a
home directory of its own; only the copies directly in the home (Aider run in
``~``) and ``~/.aider.conf.yml`` are catalogued. Files:

* ``.aider.chat.history.md``: the Markdown transcript, runs one after another
  (chat.py, through formats/markdown_history.py; status lines read by status.py);
* ``.aider.input.history``: what was typed at the prompt, prompt_toolkit's
  FileHistory with a local time per entry (prompts.py, through
  formats/file_history.py); secondary, joined to the transcript's prompts;
* ``.aider.llm.history``: requests to the model and replies, written only with
  ``--llm-history-file`` (llm_log.py);
* ``.aider.conf.yml``: options, the yolo flag ``yes-always`` among them
  (config.py). ``~/.aider/oauth-keys.env`` and ``.env`` hold API keys and are
  never collected.

Every time these files hold is local time without a zone: rows are untimed and
the time is quoted in their text.

Sample records::

    # aider chat started at 2026-07-02 11:14:02
    #### The login endpoint times out under load.··
    > Applied edit to src/db/pool.py··
    # 2026-07-02 11:14:40.512093          (.aider.input.history)
    +The login endpoint times out under load.

References: Aider-AI/aider@5dc9490bb35f9729ef2c95d00a19ccd30c26339c (0.86.3.dev) aider/io.py:335-336 (run
header), 736-766 (input and LLM history), 775-797 (prompt and reply), 807-1000 (questions and status),
1117-1136 (append_chat_history); aider/args.py:271-300 (history files), 760 (yes-always);
aider/coders/base_coder.py:207-290 (banner), 1783-1834 (send, LLM history), 1994-2068 (token report),
2296-2334 (edits), 2434-2486 (shell commands); aider/repo.py:313 (commit line); aider/utils.py:105-137
(format_messages), 148-191 (split_chat_history_markdown, Aider's own reader); aider/reasoning_tags.py:8;
aider/main.py:370 (oauth-keys.env), 464-478 (.aider.conf.yml); prompt-toolkit 3.0.52
src/prompt_toolkit/history.py:261-306 (FileHistory), buffer.py:1356-1365;
research/formats-cli-agents.md section 8 and research/formats-more-cli-agents.md section 3.
"""

from .chat import parse_chat_history
from .config import parse_config
from .llm_log import parse_llm_history
from .prompts import parse_input_history

PARSERS = (
    ("aider.chat_history.v1", parse_chat_history),
    ("aider.input_history.v1", parse_input_history),
    ("aider.llm_history.v1", parse_llm_history),
    ("aider.config.v1", parse_config),
)
