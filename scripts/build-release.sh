#!/usr/bin/env bash
# The one way to build release binaries: `swift build -c release` plus the
# release-only compiler flags, which cannot live in Package.swift (unsafeFlags
# there stop other packages from depending on the LarderClient product).
#   scripts/build-release.sh [swift build options...]   e.g. --product larder-server
#
# -enforce-exclusivity=unchecked: release builds skip Swift's dynamic exclusivity
# checks, about a tenth of the CPU of a health check on the per-call path. Debug
# builds, which every test run (plain and TSan) uses, keep them, so a violation
# still traps there.
set -euo pipefail
exec swift build -c release -Xswiftc -enforce-exclusivity=unchecked "$@"
