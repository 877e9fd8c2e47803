"""``aitrail report``: one self-contained HTML file for examiners (docs/report.md).

Modules: ``data`` (a bundle's own metadata and accounting), ``timeline``
(analyze's rows streamed into the page's data), ``tools`` (which calls are
findings), ``svg`` (the activity chart), ``html`` (the static sections),
``assets`` (the inline style and script and the CSP), ``build`` (the order of work).
"""
