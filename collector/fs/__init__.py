"""The filesystem seam: everything platform-specific the finding and reading rooms ask of the operating system.

meta.py is the metadata an examiner wants (lstat fields in ns, birth time);
backend.py the operations a backend offers (opens relative to a directory
descriptor without following links, lstat/fstat, listings, links, the
access-time protection each open had); linux.py and posix.py the two
backends; platform.py which one a run uses (AITRAIL_PLATFORM, sys.platform).
Another platform's backend is one more module of this room.
"""
