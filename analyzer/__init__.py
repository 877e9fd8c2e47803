"""aitrail analyzer: runs offline on a workstation and reads only the bundle.

Turns a verified bundle into one normalized timeline in which every row cites
the bundle member, its SHA-256 and the line, offset or row it came from.
"""

__version__ = "0.1.0"
