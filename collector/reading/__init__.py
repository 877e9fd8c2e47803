"""Reading files: each matched file opened without following links or changing its atime, read once, streamed.

capture (one file: lstat, open, fstat, read to its end, holes unread, the
secret-inode veto on the open descriptor) and pipeline (every entry in
order into the bundle writer, outcomes recorded).
"""
