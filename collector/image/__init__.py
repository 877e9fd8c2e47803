"""A mounted disk image described as itself: its users' homes, host name and time zone, read from the image."""
