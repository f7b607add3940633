#!/usr/bin/env bash
# Prove the declared lower bounds: run the tests against exactly the lowest
# versions the five pyproject files allow (uv --resolution lowest-direct).
#
#   bash scripts/lowest_versions.sh            # both runs below
#   bash scripts/lowest_versions.sh core       # or just one of them
#
# "core": the five distributions without the mcp extra, so anyio, pluggy,
# pydantic and pytest (dsh-fs[testing]) sit at their own floors; every
# package's tests and the integration suite, without the long reliability
# subset and the MCP server test (it needs the extra).
# "mcp": dsh-tool-fs[mcp] at its floor (mcp 2.3 raises anyio and pydantic
# itself); the dsh-tool-fs tests and the MCP server test.
#
# Each run prints the versions it resolved, then pytest's summary. Both
# anyio backends run (trio is a test dependency, at its own floor too).
# Needs python3 >= 3.11 with uv (python3 -m pip install uv; hatch brings it).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -eq 0 ]; then set -- core mcp; fi
uv=(python3 -m uv)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Test-only tools, at their floors with the rest: trio's is what anyio 4.5's
# own trio extra asks for; hypothesis's is the dev floor of the root
# pyproject.toml, the lowest release the tests pass with.
trio="trio>=0.26.1"
hypothesis="hypothesis==6.163.0"

for run in "$@"; do
  venv="$work/$run"
  "${uv[@]}" venv -q --python python3 "$venv"
  case "$run" in
    core)
      tool_fs="packages/dsh-tool-fs"
      tests=(packages/dsh-fs/tests packages/dsh-fs-local/tests packages/dsh-fs-memory/tests
             packages/dsh-fs-policy/tests packages/dsh-tool-fs/tests tests-integration
             --ignore=tests-integration/reliability --ignore=tests-integration/test_mcp_server.py)
      ;;
    mcp)
      tool_fs="packages/dsh-tool-fs[mcp]"
      tests=(packages/dsh-tool-fs/tests tests-integration/test_mcp_server.py)
      ;;
    *)
      echo "unknown run: $run (core or mcp)" >&2
      exit 2
      ;;
  esac
  "${uv[@]}" pip install -q --python "$venv/bin/python" --resolution lowest-direct \
    -e "packages/dsh-fs[testing]" -e packages/dsh-fs-local -e packages/dsh-fs-memory \
    -e packages/dsh-fs-policy -e "$tool_fs" "$trio" "$hypothesis"
  echo "== lowest versions, run '$run':"
  "${uv[@]}" pip freeze -q --python "$venv/bin/python" \
    | grep -iE '^(anyio|pluggy|pydantic|pydantic-core|mcp|pytest|trio|hypothesis)==' \
    | tr '\n' ' '
  echo
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "${tests[@]}"
done
