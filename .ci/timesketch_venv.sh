# Timesketch's server package (PyPI `timesketch`) in a venv of its own, outside the tree, for
# tests/analyzer/test_timesketch_server.py, which runs the server's own upload validators
# (timesketch/lib/utils.py read_and_validate_jsonl and read_and_validate_csv) over aitrail's exports.
#
# Sourced by .ci/run (`. .ci/timesketch_venv.sh`): on success it exports AITRAIL_TIMESKETCH_PYTHON, that venv's
# python; where Timesketch cannot be installed it says so and the test skips. It never ends the calling shell.
#
# Why two install steps: the server's sdist on PyPI declares no dependencies. Its setup.py hands
# install_requires a generator, and the metadata setuptools builds from it has no Requires-Dist (measured on
# timesketch 20261014), so `pip install timesketch` brings the server's code and nothing it imports. The
# release's own pins are in the requirements.txt inside the sdist: they are installed from there, with the
# sdist, in one resolver run. Should those pins not install, the fallback is the smallest route that still runs
# Timesketch's own validator code: the package without dependencies plus the pinned lines of what
# timesketch/lib/utils.py imports (pandas, PyYAML, python-dateutil, Flask), taken from the same file.

aitrail_timesketch_venv() {
  local venv="${TMPDIR:-/tmp}/aitrail-ci-timesketch"
  local download="$venv-sdist"
  rm -rf "$venv" "$download"
  python3 -m venv "$venv" || return 1
  # the sdist, never a wheel: only the sdist carries requirements.txt
  "$venv/bin/pip" download -q --no-deps --no-binary timesketch -d "$download" timesketch || return 1
  local sdist
  sdist=$(find "$download" -maxdepth 1 -name 'timesketch-*.tar.gz' | head -n 1)
  [ -n "$sdist" ] || return 1
  tar -xzf "$sdist" -C "$download" --wildcards 'timesketch-*/requirements.txt' || return 1
  local requirements
  requirements=$(find "$download" -mindepth 2 -maxdepth 2 -name requirements.txt | head -n 1)
  [ -n "$requirements" ] || return 1
  if "$venv/bin/pip" install -q "$sdist" -r "$requirements"; then
    echo "CI: Timesketch installed with the pins of its requirements.txt"
  else
    echo "CI: Timesketch's pins did not install; installing it without dependencies plus what lib/utils.py imports"
    local imported="$download/utils-imports.txt"
    grep -iE '^(pandas|pyyaml|python[-_]dateutil|flask)[=<>~! ]' "$requirements" >"$imported" || return 1
    "$venv/bin/pip" install -q --no-deps "$sdist" || return 1
    "$venv/bin/pip" install -q -r "$imported" || return 1
  fi
  "$venv/bin/python" -c 'from timesketch.lib.utils import read_and_validate_csv, read_and_validate_jsonl' \
    || return 1
  AITRAIL_TIMESKETCH_PYTHON="$venv/bin/python"
  export AITRAIL_TIMESKETCH_PYTHON
  echo "CI: timesketch $("$venv/bin/pip" show timesketch | sed -n 's/^Version: //p') installed for the server validator test"
}

if ! aitrail_timesketch_venv; then
  unset AITRAIL_TIMESKETCH_PYTHON
  echo "CI: Timesketch not installable here; the Timesketch server validator test will skip"
fi
unset -f aitrail_timesketch_venv
