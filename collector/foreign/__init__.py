"""``aitrail import``: what UAC, KAPE, Velociraptor and acquire collected, sealed as aitrail bundles (run.py)."""
