r"""Auggie (Augment Code's terminal agent): session JSON files, their backups, settings and plans.

The row rules are those of docs/agents/auggie.md. Coverage is partial: the
session envelope and the exchange fields the bundle writes are read as
confirmed in the bundled code; what is not established (the inner shapes of
``changedFiles``, ``summarizations``, ``subAgents``, request node types other
than text and tool results) is shown as bounded excerpts that name it.

* ``~/.augment/sessions/<conversationId>.json``: a ``session:`` row, the
  model and guidelines, then per ``chatHistory`` exchange the tool results of
  earlier calls, the user's message, thinking, the reply and the tool calls,
  joined by ``tool_use_id`` (session.py); ``<id>-backup<N>.json`` (secondary)
  the same;
* ``settings.json`` / ``settings.local.json``: tool permission rules as
  ``permission setting:`` rows, the model, other settings; provider keys
  (``bringYourOwnKey``) withheld (settings.py);
* ``plans/*.md``: ``plan:`` rows.

``session.json`` (the login token) is never collected. Cloud agents keep their
conversation on Augment's servers: the catalog records that absence.

Sample record (a chatHistory item)::

    {"exchange":{"request_id":"req-2","request_message":"","response_text":"Two rules fail.",
      "request_nodes":[{"id":0,"type":1,"tool_result_node":{"tool_use_id":"tu_1","content":"2 problems",
      "is_error":false,"request_id":"req-1","duration_ms":2210,"start_time_ms":1778486404000}}],
      "response_nodes":[]},"completed":true,"sequenceId":2,"finishedAt":"2026-05-11T08:00:15.000Z",
     "changedFiles":[],"changedFilesSkipped":[],"changedFilesSkippedCount":0}

References: npm @augmentcode/auggie@0.36.0 augment.mjs (a minified bundle; anchors are literals one can grep
for): ``saveSession(e,n,r,i)`` (the session envelope), ``pushExchange(e)`` (the exchange and chatHistory item),
``tool_result_node:{tool_use_id:i.tool_use.tool_use_id,content:r,is_error:n.isError`` (request node type 1),
``{type:5,content:"",tool_use:{tool_use_id:s.toolUseId,tool_name:s.toolName,input_json:s.inputJson}`` and
``{type:8,content:s.content,thinking:{content:s.content}`` (response nodes), ``K1t=class{...SessionBackupStore``
(``<id>-backup<N>.json``), ``deleteSession(e){let n=this.getSessionFilePath(e);...unlink`` (delete removes the
main file only), ``bXe=te.object({model:...toolPermissions:te.array(bAn)`` (settings), ``bringYourOwnKey``;
research/formats-more-cli-agents.md section 15.
"""

from .session import parse_session
from .settings import parse_plan, parse_settings

PARSERS = (
    ("auggie.session.v1", parse_session),
    ("auggie.settings.v1", parse_settings),
    ("auggie.plan.v1", parse_plan),
)
