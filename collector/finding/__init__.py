"""Finding files: which paths of a home or image the catalog names, and which of them are never opened.

plan (targets from the catalog, settings and environment overrides), expand
and walk (globs expanded from their literal prefixes, directories opened one
component at a time, links never followed), contain (no path leaves its
location), settings (the agents' own relocation settings, read safely),
vetoes and secret_inodes (credentials and secrets, by name and by inode).
Nothing here reads a file's content.
"""
