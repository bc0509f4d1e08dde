#ifndef SCROLLBACK_IMAGE_CODEC_H
#define SCROLLBACK_IMAGE_CODEC_H

#include <stddef.h>
#include <stdint.h>

/// An image decoded to 8-bit RGBA (not premultiplied), row after row, no padding.
typedef struct {
    uint8_t *pixels;
    uint32_t width;
    uint32_t height;
} sb_image;

/// Why an image cannot be shown.
enum {
    SB_IMAGE_OK = 0,
    /// Not PNG, JPEG, WebP or GIF (by its first bytes).
    SB_IMAGE_UNKNOWN_FORMAT = 1,
    /// Damaged or cut short: the decoder failed.
    SB_IMAGE_DAMAGED = 2,
    /// Larger than the limits given (declared in its header: nothing was allocated for it).
    SB_IMAGE_TOO_LARGE = 3,
    /// Memory could not be had.
    SB_IMAGE_NO_MEMORY = 4,
};

/// Decodes the first frame of a PNG, JPEG, WebP or GIF file in memory. An image whose header
/// declares more than `max_side` pixels a side or `max_pixels` in all is refused before any
/// pixel buffer is allocated (a decompression bomb costs nothing); a JPEG larger than that is
/// decoded at a half, a quarter or an eighth of its size when that fits. On success the
/// caller frees `out` with `sb_image_free`.
int sb_image_decode(const uint8_t *data, size_t size, uint32_t max_side, uint64_t max_pixels, sb_image *out);

void sb_image_free(sb_image *image);

/// How `sb_image_render` draws.
enum {
    SB_RENDER_SYMBOLS = 0,
    SB_RENDER_SIXEL = 1,
    SB_RENDER_KITTY = 2,
    SB_RENDER_ITERM = 3,
};

/// Colours of the symbols mode.
enum {
    SB_COLORS_16 = 0,
    SB_COLORS_256 = 1,
    SB_COLORS_TRUE = 2,
    /// No colour at all (`NO_COLOR`): the terminal's own foreground and background.
    SB_COLORS_NONE = 3,
};

/// The image scaled to fit `columns` × `rows` terminal cells (its aspect kept; each cell
/// `cell_width` × `cell_height` pixels) in `mode`, as the bytes to write at the cursor
/// (malloc'd, `*length` long, NUL-terminated); NULL when libchafa fails. `*used_columns` and
/// `*used_rows` say the cells it takes. Free with `sb_image_free_text`.
char *sb_image_render(
    const sb_image *image, int mode, int colors, int columns, int rows, int cell_width, int cell_height, size_t *length,
    int *used_columns, int *used_rows);

void sb_image_free_text(char *text);

/// For the benchmark: decodes and draws `data` `iterations` times, as the reader does, in a
/// plain C loop; the nanoseconds it took in all, 0 when it failed.
uint64_t sb_image_bench(
    const uint8_t *data, size_t size, int iterations, int mode, int columns, int rows, int cell_width, int cell_height);

#endif
