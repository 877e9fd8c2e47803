"""Package list for setuptools: every package under the three mapped folders.

ADR 0001 installs the folders collector/, analyzer/ and catalog/ as
aitrail.collector, aitrail.analyzer and aitrail.catalog. setuptools' own
``packages.find`` cannot add the ``aitrail.`` prefix to what it finds under a
mapped folder, so the subpackages are found here; a hand-written list once
left the parsers out of the wheel.
"""

from setuptools import find_packages, setup

MAPPED = {"aitrail.collector": "collector", "aitrail.analyzer": "analyzer", "aitrail.catalog": "catalog"}

packages = []
for name, folder in MAPPED.items():
    packages.append(name)
    packages.extend(f"{name}.{sub}" for sub in find_packages(folder))

setup(packages=packages, package_dir=dict(MAPPED))
