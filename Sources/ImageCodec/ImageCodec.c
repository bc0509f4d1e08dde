// Decoding (libpng, libjpeg-turbo, libwebp, giflib) and drawing (libchafa) of images for the
// reader. Every decoder reads from memory, reports its errors back here (libpng and libjpeg
// through longjmp, never exit()), and is told the size before any pixel buffer is made.

#include "ImageCodec.h"

// stdio before jpeglib, which uses FILE without including it.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <time.h>
#include <chafa.h>
#include <gif_lib.h>
#include <jpeglib.h>
#include <jerror.h>
#include <png.h>
#include <webp/decode.h>

static int fits(uint64_t width, uint64_t height, uint32_t max_side, uint64_t max_pixels) {
    return width > 0 && height > 0 && width <= max_side && height <= max_side && width * height <= max_pixels;
}

static uint8_t *allocate(uint64_t width, uint64_t height) {
    uint64_t bytes = width * height * 4;
    if (bytes / 4 / height != width || bytes > SIZE_MAX) return NULL;
    return malloc((size_t)bytes);
}

// MARK: PNG

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t at;
} memory_reader;

static void png_read_memory(png_structp png, png_bytep out, png_size_t count) {
    memory_reader *reader = png_get_io_ptr(png);
    if (reader->size - reader->at < count) png_error(png, "cut short");
    memcpy(out, reader->data + reader->at, count);
    reader->at += count;
}

/// Warnings are not printed (standard error is the terminal the reader is drawn on).
static void png_quiet(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

/// Errors neither: back to the setjmp of the decode, saying nothing.
static void png_fail(png_structp png, png_const_charp message) {
    (void)message;
    png_longjmp(png, 1);
}

static int decode_png(const uint8_t *data, size_t size, uint32_t max_side, uint64_t max_pixels, sb_image *out) {
    // The size its header declares, looked at first: too large is said as such (libpng's
    // own limit would say only that it failed).
    if (size >= 24 && memcmp(data + 12, "IHDR", 4) == 0) {
        uint64_t width = (uint64_t)data[16] << 24 | (uint64_t)data[17] << 16 | (uint64_t)data[18] << 8 | data[19];
        uint64_t height = (uint64_t)data[20] << 24 | (uint64_t)data[21] << 16 | (uint64_t)data[22] << 8 | data[23];
        if (width > 0 && height > 0 && !fits(width, height, max_side, max_pixels)) return SB_IMAGE_TOO_LARGE;
    }
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, png_fail, png_quiet);
    if (!png) return SB_IMAGE_NO_MEMORY;
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return SB_IMAGE_NO_MEMORY;
    }
    // Volatile: they change between setjmp and a longjmp back to it.
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    volatile int result = SB_IMAGE_DAMAGED;
    if (setjmp(png_jmpbuf(png))) {
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return result;
    }
    // The decoder's own limits too: a side, and the memory one chunk (a text, an ICC
    // profile) may take.
    png_set_user_limits(png, max_side, max_side);
    png_set_chunk_malloc_max(png, 8u << 20);
    memory_reader reader = {data, size, 0};
    png_set_read_fn(png, &reader, png_read_memory);
    png_read_info(png, info);
    png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
    if (!fits(width, height, max_side, max_pixels)) {
        result = SB_IMAGE_TOO_LARGE;
        png_error(png, "too large");
    }
    // Everything as 8-bit RGBA.
    png_set_expand(png);
    png_set_strip_16(png);
    png_set_gray_to_rgb(png);
    png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4) png_error(png, "unexpected row size");
    pixels = allocate(width, height);
    rows = malloc(sizeof(png_bytep) * height);
    if (!pixels || !rows) {
        result = SB_IMAGE_NO_MEMORY;
        png_error(png, "no memory");
    }
    for (png_uint_32 row = 0; row < height; row++) rows[row] = pixels + (size_t)row * width * 4;
    png_read_image(png, rows);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    out->pixels = pixels;
    out->width = width;
    out->height = height;
    return SB_IMAGE_OK;
}

// MARK: JPEG

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    /// The decoder ran out of the memory it is allowed (a huge progressive image).
    int out_of_memory;
} jpeg_failure;

static void jpeg_fail(j_common_ptr info) {
    jpeg_failure *failure = (jpeg_failure *)info->err;
    if (info->err->msg_code == JERR_OUT_OF_MEMORY) failure->out_of_memory = 1;
    longjmp(failure->jump, 1);
}

/// Warnings are not printed; one (a file cut short, which libjpeg fills with grey) makes the
/// image damaged.
static void jpeg_quiet(j_common_ptr info, int level) {
    if (level < 0) info->err->num_warnings++;
}

static int decode_jpeg(const uint8_t *data, size_t size, uint32_t max_side, uint64_t max_pixels, sb_image *out) {
    struct jpeg_decompress_struct info;
    jpeg_failure failure;
    info.err = jpeg_std_error(&failure.base);
    failure.base.error_exit = jpeg_fail;
    failure.base.emit_message = jpeg_quiet;
    uint8_t *volatile pixels = NULL;
    volatile int result = SB_IMAGE_DAMAGED;
    failure.out_of_memory = 0;
    if (setjmp(failure.jump)) {
        free(pixels);
        jpeg_destroy_decompress(&info);
        return failure.out_of_memory ? SB_IMAGE_TOO_LARGE : result;
    }
    jpeg_create_decompress(&info);
    // Bounds the memory the decoder itself may take (progressive images keep coefficients).
    info.mem->max_memory_to_use = 256L << 20;
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    // A large photo is decoded at a fraction of its size when the whole would not fit.
    info.scale_num = 1;
    info.scale_denom = 1;
    while (info.scale_denom < 8 && !fits((info.image_width + info.scale_denom - 1) / info.scale_denom,
                                         (info.image_height + info.scale_denom - 1) / info.scale_denom, max_side, max_pixels)) {
        info.scale_denom *= 2;
    }
    info.out_color_space = JCS_EXT_RGBA;
    jpeg_calc_output_dimensions(&info);
    if (!fits(info.output_width, info.output_height, max_side, max_pixels)) {
        result = SB_IMAGE_TOO_LARGE;
        longjmp(failure.jump, 1);
    }
    jpeg_start_decompress(&info);
    if (info.output_components != 4) longjmp(failure.jump, 1);
    pixels = allocate(info.output_width, info.output_height);
    if (!pixels) {
        result = SB_IMAGE_NO_MEMORY;
        longjmp(failure.jump, 1);
    }
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = pixels + (size_t)info.output_scanline * info.output_width * 4;
        if (jpeg_read_scanlines(&info, &row, 1) != 1) longjmp(failure.jump, 1);
    }
    if (failure.base.num_warnings > 0) longjmp(failure.jump, 1);
    out->width = info.output_width;
    out->height = info.output_height;
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    out->pixels = pixels;
    return SB_IMAGE_OK;
}

// MARK: WebP

static int decode_webp(const uint8_t *data, size_t size, uint32_t max_side, uint64_t max_pixels, sb_image *out) {
    int width = 0, height = 0;
    if (!WebPGetInfo(data, size, &width, &height)) return SB_IMAGE_DAMAGED;
    if (width <= 0 || height <= 0 || !fits((uint64_t)width, (uint64_t)height, max_side, max_pixels)) return SB_IMAGE_TOO_LARGE;
    uint8_t *pixels = allocate((uint64_t)width, (uint64_t)height);
    if (!pixels) return SB_IMAGE_NO_MEMORY;
    size_t stride = (size_t)width * 4;
    if (!WebPDecodeRGBAInto(data, size, pixels, stride * (size_t)height, (int)stride)) {
        free(pixels);
        return SB_IMAGE_DAMAGED;
    }
    out->pixels = pixels;
    out->width = (uint32_t)width;
    out->height = (uint32_t)height;
    return SB_IMAGE_OK;
}

// MARK: GIF

static int gif_read_memory(GifFileType *gif, GifByteType *out, int count) {
    memory_reader *reader = gif->UserData;
    if (count < 0) return 0;
    size_t left = reader->size - reader->at;
    size_t taken = (size_t)count < left ? (size_t)count : left;
    memcpy(out, reader->data + reader->at, taken);
    reader->at += taken;
    return (int)taken;
}

/// The first frame only, read row by row (never DGifSlurp: a GIF of ten thousand frames would
/// be held whole), painted over its logical screen.
static int decode_gif(const uint8_t *data, size_t size, uint32_t max_side, uint64_t max_pixels, sb_image *out) {
    memory_reader reader = {data, size, 0};
    int error = 0;
    GifFileType *gif = DGifOpen(&reader, gif_read_memory, &error);
    if (!gif) return SB_IMAGE_DAMAGED;
    int result = SB_IMAGE_DAMAGED;
    uint8_t *pixels = NULL;
    GifByteType *line = NULL;
    int transparent = -1;
    uint64_t screen_width = gif->SWidth > 0 ? (uint64_t)gif->SWidth : 0, screen_height = gif->SHeight > 0 ? (uint64_t)gif->SHeight : 0;
    if (!fits(screen_width, screen_height, max_side, max_pixels)) {
        result = SB_IMAGE_TOO_LARGE;
        goto done;
    }
    for (int records = 0; records < 4096; records++) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) goto done;
        if (type == TERMINATE_RECORD_TYPE) goto done;
        if (type == EXTENSION_RECORD_TYPE) {
            int code = 0;
            GifByteType *extension = NULL;
            if (DGifGetExtension(gif, &code, &extension) == GIF_ERROR) goto done;
            while (extension != NULL) {
                if (code == GRAPHICS_EXT_FUNC_CODE && extension[0] >= 4 && (extension[1] & 1)) transparent = extension[4];
                if (DGifGetExtensionNext(gif, &extension) == GIF_ERROR) goto done;
            }
            continue;
        }
        if (type != IMAGE_DESC_RECORD_TYPE) continue;
        if (DGifGetImageDesc(gif) == GIF_ERROR) goto done;
        GifImageDesc *frame = &gif->Image;
        ColorMapObject *map = frame->ColorMap ? frame->ColorMap : gif->SColorMap;
        if (!map || frame->Width <= 0 || frame->Height <= 0 || frame->Left < 0 || frame->Top < 0) goto done;
        if ((uint64_t)frame->Left + (uint64_t)frame->Width > screen_width || (uint64_t)frame->Top + (uint64_t)frame->Height > screen_height) {
            goto done;
        }
        pixels = allocate(screen_width, screen_height);
        line = malloc((size_t)frame->Width);
        if (!pixels || !line) {
            result = SB_IMAGE_NO_MEMORY;
            goto done;
        }
        memset(pixels, 0, (size_t)(screen_width * screen_height * 4));
        // Interlaced frames come in four passes; their rows land where they belong.
        static const int starts[] = {0, 4, 2, 1}, steps[] = {8, 8, 4, 2};
        int passes = frame->Interlace ? 4 : 1;
        for (int pass = 0; pass < passes; pass++) {
            int start = frame->Interlace ? starts[pass] : 0, step = frame->Interlace ? steps[pass] : 1;
            for (int row = start; row < frame->Height; row += step) {
                if (DGifGetLine(gif, line, frame->Width) == GIF_ERROR) goto done;
                uint8_t *target = pixels + ((size_t)(frame->Top + row) * screen_width + (size_t)frame->Left) * 4;
                for (int column = 0; column < frame->Width; column++) {
                    int index = line[column];
                    if (index == transparent || index >= map->ColorCount) continue;
                    GifColorType color = map->Colors[index];
                    target[column * 4 + 0] = color.Red;
                    target[column * 4 + 1] = color.Green;
                    target[column * 4 + 2] = color.Blue;
                    target[column * 4 + 3] = 0xFF;
                }
            }
        }
        out->pixels = pixels;
        out->width = (uint32_t)screen_width;
        out->height = (uint32_t)screen_height;
        pixels = NULL;
        result = SB_IMAGE_OK;
        goto done;
    }
done:
    free(line);
    free(pixels);
    DGifCloseFile(gif, &error);
    return result;
}

// MARK: The entry points

int sb_image_decode(const uint8_t *data, size_t size, uint32_t max_side, uint64_t max_pixels, sb_image *out) {
    out->pixels = NULL;
    out->width = 0;
    out->height = 0;
    if (!data || size < 12) return SB_IMAGE_UNKNOWN_FORMAT;
    if (memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0) return decode_png(data, size, max_side, max_pixels, out);
    if (data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) return decode_jpeg(data, size, max_side, max_pixels, out);
    if (memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "WEBP", 4) == 0) return decode_webp(data, size, max_side, max_pixels, out);
    if (memcmp(data, "GIF87a", 6) == 0 || memcmp(data, "GIF89a", 6) == 0) return decode_gif(data, size, max_side, max_pixels, out);
    return SB_IMAGE_UNKNOWN_FORMAT;
}

void sb_image_free(sb_image *image) {
    if (!image) return;
    free(image->pixels);
    image->pixels = NULL;
}

/// A terminal description with the sequences of `mode`, from chafa's own database, chosen by
/// the environment a terminal of that kind sets (the real one was asked already).
static ChafaTermInfo *term_info_for(int mode, int colors) {
    const char *kitty[] = {"TERM=xterm-kitty", NULL};
    const char *sixel[] = {"TERM=mlterm", NULL};
    const char *iterm[] = {"TERM=xterm-256color", "TERM_PROGRAM=iTerm.app", NULL};
    const char *truecolor[] = {"TERM=xterm-256color", "COLORTERM=truecolor", NULL};
    const char *indexed[] = {"TERM=xterm-256color", NULL};
    const char *basic[] = {"TERM=xterm", NULL};
    const char **environment = mode == SB_RENDER_KITTY   ? kitty
                               : mode == SB_RENDER_SIXEL ? sixel
                               : mode == SB_RENDER_ITERM ? iterm
                               : colors == SB_COLORS_TRUE ? truecolor
                               : colors == SB_COLORS_256  ? indexed
                                                          : basic;
    return chafa_term_db_detect(chafa_term_db_get_default(), (gchar **)environment);
}

char *sb_image_render(
    const sb_image *image, int mode, int colors, int columns, int rows, int cell_width, int cell_height, size_t *length,
    int *used_columns, int *used_rows) {
    if (!image || !image->pixels || columns <= 0 || rows <= 0 || cell_width <= 0 || cell_height <= 0) return NULL;
    if (image->width > (uint32_t)INT32_MAX / 4 || image->height > (uint32_t)INT32_MAX) return NULL;
    // The cells the image takes, its aspect kept (cells are taller than wide).
    gint width = columns, height = rows;
    chafa_calc_canvas_geometry((gint)image->width, (gint)image->height, &width, &height, (gfloat)cell_width / (gfloat)cell_height, TRUE, FALSE);
    if (width < 1) width = 1;
    if (height < 1) height = 1;
    ChafaCanvasConfig *config = chafa_canvas_config_new();
    chafa_canvas_config_set_geometry(config, width, height);
    chafa_canvas_config_set_cell_geometry(config, cell_width, cell_height);
    ChafaPixelMode pixel = mode == SB_RENDER_SIXEL   ? CHAFA_PIXEL_MODE_SIXELS
                           : mode == SB_RENDER_KITTY ? CHAFA_PIXEL_MODE_KITTY
                           : mode == SB_RENDER_ITERM ? CHAFA_PIXEL_MODE_ITERM2
                                                     : CHAFA_PIXEL_MODE_SYMBOLS;
    chafa_canvas_config_set_pixel_mode(config, pixel);
    chafa_canvas_config_set_canvas_mode(
        config, mode != SB_RENDER_SYMBOLS || colors == SB_COLORS_TRUE ? CHAFA_CANVAS_MODE_TRUECOLOR
                : colors == SB_COLORS_256                            ? CHAFA_CANVAS_MODE_INDEXED_256
                : colors == SB_COLORS_NONE                           ? CHAFA_CANVAS_MODE_FGBG
                                                                     : CHAFA_CANVAS_MODE_INDEXED_16);
    ChafaCanvas *canvas = chafa_canvas_new(config);
    chafa_canvas_config_unref(config);
    if (!canvas) return NULL;
    chafa_canvas_draw_all_pixels(
        canvas, CHAFA_PIXEL_RGBA8_UNASSOCIATED, image->pixels, (gint)image->width, (gint)image->height, (gint)image->width * 4);
    ChafaTermInfo *info = term_info_for(mode, colors);
    GString *printed = chafa_canvas_print(canvas, info);
    chafa_term_info_unref(info);
    chafa_canvas_unref(canvas);
    if (!printed) return NULL;
    *length = printed->len;
    *used_columns = width;
    *used_rows = height;
    return g_string_free(printed, FALSE);
}

void sb_image_free_text(char *text) { g_free(text); }

uint64_t sb_image_bench(
    const uint8_t *data, size_t size, int iterations, int mode, int columns, int rows, int cell_width, int cell_height) {
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int turn = 0; turn < iterations; turn++) {
        sb_image image;
        if (sb_image_decode(data, size, 16384, 24000000, &image) != SB_IMAGE_OK) return 0;
        size_t length = 0;
        int used_columns = 0, used_rows = 0;
        char *text = sb_image_render(&image, mode, SB_COLORS_TRUE, columns, rows, cell_width, cell_height, &length, &used_columns, &used_rows);
        sb_image_free(&image);
        if (!text) return 0;
        sb_image_free_text(text);
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    return (uint64_t)(end.tv_sec - start.tv_sec) * 1000000000u + (uint64_t)(end.tv_nsec - start.tv_nsec);
}
