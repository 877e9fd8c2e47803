r"""ChatGPT desktop (OpenAI, closed source): the legacy v1 conversation files.

The row rules are those of docs/agents/chatgpt-desktop.md. Every record shape
is third-party observation ([obs]); nothing is read in source.

* ``conversations-<store uuid>/<conversation>.json`` (macOS
  ``~/Library/Application Support/com.openai.chat``): one conversation per
  file, the ChatGPT ``mapping`` tree walked iteratively (conversation.py).
* ``conversations-v2-*/`` and ``conversations-v3-*/`` hold AES-256-GCM
  encrypted ``.data`` files whose key is in the macOS Keychain: catalogued
  as opaque stores (the summary, the report and one ``integrity: not parsed``
  row per file say they exist, how large and how recent), never parsed here.
* The Codex desktop app's threads are Codex CLI rollouts, read by the
  ``codex`` package; its own files here are documentary.

Sample record (v1, hand-written from the research's shape)::

    {"id":"c0ffee00-1111-4222-8333-444455556666","title":"Regex for ISO dates",
     "create_time":1787000000.25,"current_node":"n3","mapping":{
       "n1":{"id":"n1","message":null,"parent":null,"children":["n2"]},
       "n2":{"id":"n2","message":{"author":{"role":"user"},"create_time":1787000001.1,
             "content":{"content_type":"text","parts":["Give me a regex ..."]}},"parent":"n1","children":["n3"]},
       "n3":{"id":"n3","message":{"author":{"role":"assistant"},"create_time":1787000003.9,
             "content":{"content_type":"text","parts":["Use ^\\d{4}-..."]},"metadata":{"model_slug":"gpt-5"}},
             "parent":"n2","children":[]}}}

References: Dicklesworthstone/franken_agent_detection@11c7efc3ee src/connectors/chatgpt.rs:1-31 (generations,
AES-256-GCM, Keychain access group 2DC432GLL2.com.openai.shared) and its ``parse_conversation_file`` (id or
conversation_id, title, mapping nodes, author.role, float-second create_time, content parts or text,
metadata.model_slug); EricZimmerman/KapeFiles@e8350fb914 Targets/Apps/ChatGPT.tkape (Windows MSIX paths);
xC0uNt3r7hr34t/irflow-timeline@b4822bcfb7 docs/dfir-tips/ai-apps/chatgpt-codex.md (roots per OS, Codex app,
Skysight); research/formats-more-desktop-agents.md section 2.
"""

from .conversation import parse_conversation

PARSERS = (
    ("chatgpt_desktop.conversation.v1", parse_conversation),
)
