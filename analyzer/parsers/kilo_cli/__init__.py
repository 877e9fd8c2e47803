r"""Kilo Code CLI (``kilo`` 7.x, an OpenCode fork): kilo.db, the TUI's state files, the global config, plans.

The row rules are those of docs/agents/kilo-cli.md:

* kilo.db (read with its -wal applied) through OpenCode's database walk
  (analyzer/formats/opencode_db.py, the rows of docs/agents/opencode.md): a
  ``session metadata:`` row per session (with Kilo's ``agent`` and ``model``
  columns), its messages' parts in order (text as user or assistant, reasoning as
  thinking, a ``tool`` part as a ``tool_use`` and a ``tool_result`` row sharing
  ``callID``, a refusal as ``permission decision:``), ``model:`` rows, ``task:``
  rows for todos, ``permission setting:`` rows for session rulesets and saved
  "always" approvals; then Kilo's agent board: ``board:`` and ``board message:``
  rows (board.py). The credential tables (account, control_account, credential,
  session_share) are never selected;
* ~/.local/state/kilo: prompt-history.jsonl (secondary), prompt-stash.jsonl,
  model.json, through the OpenCode TUI readers (state.py);
* ~/.config/kilo/kilo.json[c] (or opencode.json[c]): ``permission setting:`` rows;
* ~/.local/share/kilo/plans/*.md: ``plan:`` rows (plan.py).

Sample records (``part.data`` of a tool part; a ``kilo_board_message`` row)::

    {"type":"tool","callID":"toolu_01Kx...","tool":"bash","state":{"status":"completed",
     "input":{"command":"npm test"},"output":"12 passing","time":{"start":1783411205100,"end":1783411209800}}}
    ('kbm_01', 'ses_root', 1, 1783411230000, 'ses_child', 'ses_root', 'RESULT',
     'The CSV export now streams rows.', NULL, 'msg_04', 'toolu_01Ly...')

References: npm @kilocode/cli-linux-x64@7.7.9 bin/kilo (Bun binary with plain embedded JS and
migration SQL, read as text; anchors ``Sx0(r$.Path.data,"kilo.db")``, ``id:"20260127222353_familiar_lady_ursula"``
... ``id:"20260907102000_kilocode_model_usage_index"``, ``NsA=kV("permission",{id:``,
``xu.define("board_post"``, ``Hh.ALL_CONFIG_FILES=``, ``{name:"PromptHistory"``); Kilo-Org/kilocode
packages/opencode/src/storage/ (stored copy: the database path function); research
formats-more-cli-agents.md section 12; docs/agents/opencode.md for the inherited record shapes.
"""

from .database import parse_database
from .plan import parse_plan
from .state import parse_config, parse_model_state, parse_prompt_history, parse_prompt_stash

PARSERS = (
    ("kilo_cli.db.v1", parse_database),
    ("kilo_cli.prompt_history.v1", parse_prompt_history),
    ("kilo_cli.prompt_stash.v1", parse_prompt_stash),
    ("kilo_cli.model_state.v1", parse_model_state),
    ("kilo_cli.config.v1", parse_config),
    ("kilo_cli.plan.v1", parse_plan),
)
