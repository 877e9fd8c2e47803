r"""Factory Droid (``droid``, npm @factory/cli): session transcripts and settings, prompt history, settings, MCP.

The row rules are those of docs/agents/factory-droid.md:

* ``~/.factory/sessions/<project key>/<session id>.jsonl`` (transcript.py): a
  ``session metadata:`` row for the ``session_start`` line (title, owner, cwd, sub-agent
  links), then per ``message`` event its blocks (typed text as ``user``, injected or
  hook text as system rows, ``assistant``, ``thinking``, ``tool_use`` / ``tool_result``
  joined by the Anthropic ``tool_use_id``, ``permission decision:`` where a result
  records one), ``model:`` rows, ``task:`` rows per ``todo_state``, ``compaction:`` rows;
* ``<session id>.settings.json`` beside it, ``settings.json`` (user, local, org-managed)
  and ``mcp.json`` (settings.py): ``model:``, ``permission setting:``, ``tokens generated:``
  and ``setting:`` rows;
* ``state/history.json`` (history.py, secondary): the prompts typed, at their time.

Sample records (a transcript line; the settings file)::

    {"type":"message","id":"m2","timestamp":"2026-07-10T12:00:11.740Z","message":{"role":"assistant",
     "content":[{"type":"tool_use","id":"toolu_0Lk","name":"Read","input":{"file_path":"/home/kim/app/a.ts"}}],
     "modelId":"claude-opus-4-1"},"parentId":"m1"}
    {"model":"claude-opus-4-1","reasoningEffort":"medium","autonomyLevel":"low","autonomyMode":"auto-low"}

References: npm @factory/cli-linux-x64@0.225.2 bin/droid (a Bun executable whose module sources are
embedded as plain JavaScript; read as text, never run; anchors ``Cs={type:"session_start",id:s,title:Ht``,
``event:{type:"message",id:s.id,timestamp:s.timestamp??new Date().toISOString(),message:CQ(``,
``function CQ(e){return{role:e.role==="assistant"?"assistant":"user",content:Ft(e.content)``,
``appendTodoState(e,s){...let r={type:"todo_state"``, ``{type:"compaction_state",id:r,timestamp:``,
``var FH="history.json";function BH(){return Fe("state",FH)}``, ``commandAllowlist:se,commandDenylist:[...lB]``,
``sc=n({mcpServers:U(H(),xt),persistentPermissions:wt.optional()})``, ``function o8(e)``); research
formats-more-cli-agents.md section 10.
"""

from .history import parse_prompt_history
from .settings import parse_mcp, parse_session_settings, parse_settings
from .transcript import parse_session

PARSERS = (
    ("factory_droid.session.v1", parse_session),
    ("factory_droid.session_settings.v1", parse_session_settings),
    ("factory_droid.prompt_history.v1", parse_prompt_history),
    ("factory_droid.settings.v1", parse_settings),
    ("factory_droid.mcp.v1", parse_mcp),
)

# A session's <id>.settings.json names it; its transcript holds it. A settings file whose
# transcript is gone (removed by hand, or recreated by Droid after a failed load) gives an
# ``integrity: session missing`` row (analyzer/integrity/sessions.py).
SESSIONS_NAMED = (("factory_droid.session_settings.v1", ("factory_droid.session.v1",)),)
