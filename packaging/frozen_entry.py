"""The frozen collector's program (packaging/build_frozen_collector.py): the ``aitrail`` command, collector only.

In a frozen build ``aitrail.collector.cli`` lists collect, verify, keygen and
catalog; analyze, export, extract and report are not in the build, and say so.
"""

from aitrail.collector.cli import run

if __name__ == "__main__":
    run()
