#include "CLarderBuildInfo.h"

// Package.swift defines LARDER_COMMIT (a string literal) for this file only when
// the environment of `swift build` has it, so a new commit recompiles this file
// and nothing else.
#ifndef LARDER_COMMIT
#define LARDER_COMMIT "unknown"
#endif

const char *larder_build_commit(void) { return LARDER_COMMIT; }
