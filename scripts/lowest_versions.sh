#!/usr/bin/env bash
# Prove the declared lower bounds: run the tests against exactly the lowest
# versions the pyproject files allow (uv --resolution lowest-direct).
#
#   bash scripts/lowest_versions.sh            # both runs below
#   bash scripts/lowest_versions.sh core       # or just one of them
#
# "core": the six distributions without the mcp extra, so anyio, pluggy,
# pydantic and pytest (dsh-fs[testing]) sit at their own floors; every
# package's tests and the integration suite, without the long reliability
# subset and the MCP server test (it needs the extra).
# "mcp": dsh-tool-fs[mcp] at its floor (mcp 2.3 raises anyio and pydantic
# itself); the dsh-tool-fs tests and the MCP server test.
# "sftp": dsh-fs-sftp with asyncssh at its floor; its tests (the kit against a
# real sshd) and the SFTP integration tests.
#
# Each run prints the versions it resolved, then pytest's summary. Both
# anyio backends run (trio is a test dependency, at its own floor too).
# Needs python3 >= 3.11 with uv (python3 -m pip install uv; hatch brings it).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -eq 0 ]; then set -- core mcp sftp; fi
uv=(python3 -m uv)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Test-only tools, at their floors with the rest: trio's is what anyio 4.5's
# own trio extra asks for; hypothesis's is the dev floor of the root
# pyproject.toml, the lowest release the tests pass with.
# sybil is imported by the root conftest.py (the docs' examples), at the
# root pyproject.toml's floor too.
trio="trio>=0.26.1"
hypothesis="hypothesis==6.163.0"
sybil="sybil>=10"

for run in "$@"; do
  venv="$work/$run"
  "${uv[@]}" venv -q --python python3 "$venv"
  case "$run" in
    core)
      tool_fs="packages/dsh-tool-fs"
      extra=()
      # The modules that import mcp (or the SDKs of the converter tests) run in "mcp".
      tests=(packages/dsh-fs/tests packages/dsh-fs-local/tests packages/dsh-fs-memory/tests
             packages/dsh-fs-policy/tests packages/dsh-tool-fs/tests
             packages/dsh-tool-fs-search/tests tests-integration
             --ignore=tests-integration/reliability --ignore=tests-integration/test_mcp_server.py
             --ignore=tests-integration/test_containment_surfaces.py
             --ignore=packages/dsh-tool-fs/tests/test_formats.py
             --ignore=packages/dsh-tool-fs-search/tests/test_definitions.py)
      ;;
    mcp)
      tool_fs="packages/dsh-tool-fs[mcp]"
      extra=("anthropic>=2.15" "openai>=3.57")  # test_formats validates against their types
      tests=(packages/dsh-tool-fs/tests tests-integration/test_mcp_server.py
             tests-integration/test_containment_surfaces.py
             packages/dsh-tool-fs-search/tests/test_definitions.py)
      ;;
    sftp)
      tool_fs="packages/dsh-tool-fs"
      extra=(-e packages/dsh-fs-sftp)
      tests=(packages/dsh-fs-sftp/tests tests-integration/test_sftp_network.py)
      ;;
    *)
      echo "unknown run: $run (core, mcp or sftp)" >&2
      exit 2
      ;;
  esac
  "${uv[@]}" pip install -q --python "$venv/bin/python" --resolution lowest-direct \
    -e "packages/dsh-fs[testing]" -e packages/dsh-fs-local -e packages/dsh-fs-memory \
    -e packages/dsh-fs-policy -e "$tool_fs" -e "packages/dsh-tool-fs-search[testing]" \
    "$trio" "$hypothesis" "$sybil" "${extra[@]}"
  echo "== lowest versions, run '$run':"
  "${uv[@]}" pip freeze -q --python "$venv/bin/python" \
    | grep -iE '^(anyio|pluggy|pydantic|pydantic-core|mcp|pytest|trio|hypothesis|sybil|anthropic|openai|pathspec|google-re2|asyncssh)==' \
    | tr '\n' ' '
  echo
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "${tests[@]}"
done
