"""Codebuff (formerly Manicode): the terminal coding agent whose chats live in ~/.config/manicode.

The row rules are those of docs/agents/codebuff.md. Everything is under
``~/.config/manicode`` (``manicode-<env>`` for a development stack; the same
path on macOS and Windows: ``os.homedir()/.config``), chats per project by
the project root's basename only:

* ``projects/<basename>/chats/<chatId>/chat-messages.json``: the current CLI's
  chat, the screen's ChatMessage array (messages.py);
* ``projects/<basename>/chats/<chatId>/messages.json``: the legacy client's
  message history, three message generations (legacy.py);
* ``prompt_history.json`` (legacy) and ``message-history.json`` (current): the
  prompts typed, no times (prompts.py), secondary.

chat.py holds what they share: the chat's start from its id (UTC), the
basename project, the call ledger. run-state.json, turn-checkpoint.json,
log.jsonl and the root state files are collected, not parsed (the page says
why); credentials.json is never collected.

Sample records::

    [{"id":"user-1775117469511","variant":"user","content":"add pagination to /orders",
      "timestamp":"2026-04-02T08:11:09.511Z","blocks":[]},
     {"id":"ai-1","variant":"ai","content":"","blocks":[{"type":"tool","toolCallId":"tc-1",
      "toolName":"write_file","input":{"path":"src/orders.ts"},"output":"Wrote src/orders.ts"}]}]
    {"id":"2025-08-30T10-22-31.120Z","messages":[{"role":"user","content":"fix the test"}],
     "updatedAt":"2025-08-30T10:25:02.004Z"}

References: CodebuffAI/codebuff@da0d57111a3501e2056b7aab2ce8a1fe233649e9 (2025-09-06) npm-app/src/credentials.ts:43-56,
npm-app/src/project-files.ts:43-90, npm-app/src/chat-storage.ts:12-88, npm-app/src/cli.ts:221,389-430,
npm-app/src/utils/logger.ts:30-80, npm-app/src/subagent-storage.ts:40-80,
common/src/types/messages/codebuff-message.ts, common/src/types/messages/content-part.ts,
common/src/tools/constants.ts:20-42; history 18bf4b81, 877b94ef, 813b7526, 2fea71c4; stored copies of the
current CLI (CodebuffAI/codebuff file index): cli/src/types/chat.ts@03cb53dc0a,
cli/src/utils/run-state-storage.ts@0b40fb03a0, cli/src/utils/chat-history.ts@e0686cd80b,
cli/src/utils/message-history.ts@690768d23c, cli/src/utils/bash-messages.ts@ce10b6eeda,
cli/src/utils/payload-sanitizer.ts@34998bb58a, cli/src/project-files.ts@0794d3f341,
cli/src/utils/auth.ts@7de5e7924c; research/formats-more-cli-agents.md section 13.
"""

from .legacy import parse_legacy_messages
from .messages import parse_chat_messages
from .prompts import parse_prompt_history

PARSERS = (
    ("codebuff.chat_messages.v1", parse_chat_messages),
    ("codebuff.legacy_messages.v1", parse_legacy_messages),
    ("codebuff.prompt_history.v1", parse_prompt_history),
)
