"""``aitrail report``: one self-contained HTML file for examiners (docs/report.md).

Modules: ``data`` (a bundle's own metadata and accounting), ``timeline``
(analyze's rows streamed into the page's data), ``findings`` (the findings
lists kept while the rows stream), ``tools`` (which calls are findings, as
data), ``outcomes`` (a command's outcome and exit code), ``commandline`` (what a
shell command reaches: network, deleted paths), ``secrets`` (secrets in prompts,
redacted), ``case`` (page one), ``svg`` (the activity charts), ``html`` (the
static sections), ``assets`` with ``assets_core``, ``assets_findings`` and
``assets_search`` (the inline style and script and the CSP), ``build`` (the
order of work).
"""
