#pragma once
#include <zlib.h>

// inflateInit2 is a macro (it passes the header's version and struct size), which Swift cannot call.
static inline int larder_inflate_init(z_stream *stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}

// deflateInit2 likewise: the zlib (window_bits 15) or gzip (31) format, memLevel 8, the default strategy.
static inline int larder_deflate_init(z_stream *stream, int level, int window_bits) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
}
