// What the build itself knows about larder: the commit it was made from.
#pragma once

/// The git commit the binaries were built from, as `LARDER_COMMIT` set it at
/// build time (scripts/commit-id.sh, through Package.swift), or "unknown".
const char *_Nonnull larder_build_commit(void);
