#pragma once
#include <zlib.h>

// inflateInit2 is a macro (it passes the header's version and struct size), which Swift cannot call.
static inline int larder_inflate_init(z_stream *stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
