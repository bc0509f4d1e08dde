#ifndef SCROLLBACK_CZLIB_SHIM_H
#define SCROLLBACK_CZLIB_SHIM_H

#include <zlib.h>

/* inflateInit2 is a macro: raw deflate (no zlib header), as ZIP archives store it. */
static inline int scrollback_inflate_init_raw(z_stream *stream) {
    return inflateInit2(stream, -15);
}

#endif
