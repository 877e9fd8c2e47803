"""The filesystem seam: what the collector asks of the operating system about one path (lstat, statx birth time).

Everything platform-specific the finding and reading rooms need lives here,
so that another platform's backend is one more module of this room.
"""
