"""Integrity findings: what the records and their files prove about deletion, rewriting and the clock.

Each rule (``rules.RULES``) gives ``integrity: <rule>: <detail>`` system rows
in the timeline, so a CSV reader sees them as well as the report:

* per file, while its rows stream past (``files.FileWatch``): clock jumps and
  gaps between the lines of an append-only log, a file modified after its last
  record or holding a record later than its modification time, and the
  deletion and compaction markers the agents write themselves;
* per bundle, once every file is parsed (``sessions.SessionNotes``): sessions an
  index or history names that no transcript in the bundle holds, and every
  collected file no parser read.

docs/report.md ("Integrity findings") says what each rule proves and what it does not.
"""
