#!/usr/bin/env bash
# Prints the commit the binaries are being built from, for LARDER_COMMIT (see
# Package.swift): the 12-digit abbreviated hash of HEAD, with "-dirty" when
# tracked files differ from it; "unknown" outside a git work tree. An
# LARDER_COMMIT already in the environment wins (a build from a source tarball).
#
#   export LARDER_COMMIT=$(scripts/commit-id.sh); swift build ...
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${LARDER_COMMIT:-}" ]]; then echo "$LARDER_COMMIT"; exit 0; fi
if ! commit=$(git rev-parse --short=12 HEAD 2>/dev/null); then echo unknown; exit 0; fi
if [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then commit+=-dirty; fi
echo "$commit"
