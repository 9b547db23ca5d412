#pragma once
#include <nghttp2/nghttp2.h>
// malloc_usable_size: the engine's allocator counts the bytes each session holds.
#include <malloc.h>
