#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>

/* libpng's simplified API reports errors in the png_image (no setjmp needed). PNG_IMAGE_SIZE is a macro Swift
   cannot import, so the whole decode lives here. */

/* 1 when `data` starts with the PNG signature. */
static inline int kiln_png_is_png(const unsigned char *data, size_t size) {
    return size >= 8 && png_sig_cmp(data, 0, 8) == 0;
}

/* Decodes the whole PNG in `data` (so that a truncated or corrupt file shows), refusing images of more than
   `max_pixels` pixels before any is decoded. Returns 0 when the image is sound (width and height set), 1 when libpng
   failed or warned (its message in `message`), 2 when the image is too large (width and height set). */
static inline int kiln_png_inspect(const unsigned char *data, size_t size, unsigned long long max_pixels,
                                   unsigned *width, unsigned *height, char *message, size_t message_size) {
    png_image image;
    void *pixels;
    int result = 0;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    *width = 0;
    *height = 0;
    if (!png_image_begin_read_from_memory(&image, data, size)) {
        snprintf(message, message_size, "%s", image.message);
        png_image_free(&image);
        return 1;
    }
    *width = image.width;
    *height = image.height;
    if ((unsigned long long)image.width * image.height > max_pixels) {
        png_image_free(&image);
        return 2;
    }
    image.format = PNG_FORMAT_RGBA;
    pixels = malloc(PNG_IMAGE_SIZE(image));
    if (pixels == NULL) {
        snprintf(message, message_size, "out of memory");
        png_image_free(&image);
        return 1;
    }
    if (!png_image_finish_read(&image, NULL, pixels, 0, NULL) || image.warning_or_error != 0) {
        snprintf(message, message_size, "%s", image.message);
        result = 1;
    }
    free(pixels);
    png_image_free(&image);
    return result;
}
