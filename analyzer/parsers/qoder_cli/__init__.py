"""Qoder CLI (@qoder-ai/qodercli): the session and sub-agent transcripts, in Claude Code's entry format.

The row rules are those of docs/agents/qoder-cli.md. Qoder is closed source;
everything here was read in the published bundle, @qoder-ai/qodercli 1.1.52
bundle/qodercli.js (its string literals XOR-obfuscated; decoded with the key
its first line declares).

* ``~/.qoder/projects/<sanitized cwd>/<sessionId>.jsonl`` and
  ``<sessionId>/subagents/agent-<id>.jsonl``: user, assistant, system and
  attachment entries as rows, tool calls joined to results by
  ``tool_use.id`` = ``tool_result.tool_use_id``, refusals from Qoder's own
  ``toolDenialKind`` / ``userFeedback``, ``model:`` and ``tokens generated:``
  rows, and the metadata entries (titles, mode, runtime config, token stats,
  leaves) as system rows (transcript.py, metadata.py).
* Everything else in ~/.qoder is collected and not read: its shapes are not
  confirmed in the bundle (the catalog says why for each store).

The transcript reader is Qoder's own, not Claude Code's (analyzer/parsers/claude_code/):
sharing that walk would mean moving mypyc-compiled modules whose constants Claude
Code's tests patch in place, and Qoder's files differ in the fields a refusal is
read from; see the page, "Parser plan".

Sample record (one transcript line)::

    {"parentUuid":"q-1","isSidechain":false,"cwd":"/Users/jo/app","sessionId":"5d6e7f80-…","version":"1.1.52",
     "gitBranch":"main","entrypoint":"cli","userType":"external","type":"user","uuid":"q-3",
     "timestamp":"2026-06-02T03:04:09.120Z","message":{"role":"user","content":[{"type":"tool_result",
     "tool_use_id":"toolu_q1","content":"User rejected tool use.","is_error":true}]},
     "sourceToolAssistantUUID":"q-2","toolDenialKind":"user-rejected"}

References: npm:@qoder-ai/qodercli@1.1.52 bundle/qodercli.js anchors `function AWi(A,e)` (envelope),
`function FJ(A,e)` and `function bZc(A)` (assistant entries, one per block, usage on the last),
`function jie(A,e,t={})` (tool-result entries, toolDenialKind, userFeedback), `function L$c(A,e={})`
(denial kinds, `j8i="User rejected tool use."`), `function nM(A,e,t="info")` (system entries),
`subtype:"compact_boundary"` (compactMetadata), `Rel=new Set([...])` (entry types),
`recordRuntimeConfig(A)` / `recordTokenStats(A)` (`timestamp:Date.now()`), `function hu(` and
`function bG(` (paths); research formats-more-cli-agents.md section 16.
"""

from .transcript import parse_transcript

PARSERS = (
    ("qoder_cli.transcript.v1", parse_transcript),
)
