#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>

/* libjpeg reports a fatal error by calling error_exit, which by default ends the process, and expects it never to
   return. Swift cannot longjmp, so the whole decode lives here: error_exit jumps back with libjpeg's message, and
   the first warning (a file cut short, corrupt data that libjpeg papers over with grey) jumps back likewise. */
struct kiln_jpeg_error {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    int warnings;
};

static void kiln_jpeg_error_exit(j_common_ptr info) {
    struct kiln_jpeg_error *error = (struct kiln_jpeg_error *)info->err;
    (*info->err->format_message)(info, error->message);
    longjmp(error->jump, 1);
}

/* A warning decides the outcome (the file is damaged, with this first message), so the decode stops there: a file of
   thousands of broken scans ("Inconsistent progression sequence" at each) took 31 s to decode to the end. */
static void kiln_jpeg_emit_message(j_common_ptr info, int level) {
    struct kiln_jpeg_error *error = (struct kiln_jpeg_error *)info->err;
    if (level < 0) {
        if (error->warnings == 0) (*info->err->format_message)(info, error->message);
        error->warnings += 1;
        longjmp(error->jump, 1);
    }
}

/* The most scans a JPEG may have: a progressive file has about ten, and each scan costs a pass over the whole image,
   so a file of thousands of small valid scans would take minutes (as djpeg's -maxscan guards against). */
#define KILN_JPEG_MAX_SCANS 100

static void kiln_jpeg_progress(j_common_ptr info) {
    if (!info->is_decompressor) return;
    j_decompress_ptr decompress = (j_decompress_ptr)info;
    if (decompress->input_scan_number > KILN_JPEG_MAX_SCANS) {
        struct kiln_jpeg_error *error = (struct kiln_jpeg_error *)info->err;
        snprintf(error->message, sizeof error->message, "more than %d scans (a progressive JPEG has about ten); not decoded further",
                 KILN_JPEG_MAX_SCANS);
        error->base.msg_code = 0;
        longjmp(error->jump, 1);
    }
}

/* 1 when libjpeg stopped with `code` because it lacks a feature a valid file may use (12- or 16-bit precision, a
   lossless or hierarchical process, arithmetic coding, a sampling or colour conversion it does not implement),
   rather than because the data is damaged. */
static inline int kiln_jpeg_is_unsupported(int code) {
    return code == JERR_BAD_PRECISION || code == JERR_SOF_UNSUPPORTED || code == JERR_ARITH_NOTIMPL
        || code == JERR_NOT_COMPILED || code == JERR_NOTIMPL || code == JERR_CCIR601_NOTIMPL
        || code == JERR_FRACT_SAMPLE_NOTIMPL || code == JERR_CONVERSION_NOTIMPL;
}

/* Decodes the whole JPEG in `data` (so that a truncated or corrupt file shows), refusing images of more than
   `max_pixels` pixels before any is decoded. Returns 0 when the image is sound (width and height set), 1 when
   libjpeg failed or warned (the first message in `message`), 2 when the image is too large (width and height set),
   3 when libjpeg cannot decode a feature the file uses (its message in `message`), 4 when the bytes do not start as
   a JPEG does (`JERR_NO_SOI`, its message in `message`). */
static inline int kiln_jpeg_inspect(const unsigned char *data, unsigned long size, unsigned long long max_pixels,
                                    unsigned *width, unsigned *height, char *message, size_t message_size) {
    struct jpeg_decompress_struct info;
    struct kiln_jpeg_error error;
    JSAMPARRAY row = NULL;
    memset(&info, 0, sizeof info);
    memset(&error, 0, sizeof error);
    info.err = jpeg_std_error(&error.base);
    error.base.error_exit = kiln_jpeg_error_exit;
    error.base.emit_message = kiln_jpeg_emit_message;
    *width = 0;
    *height = 0;
    struct jpeg_progress_mgr progress;
    memset(&progress, 0, sizeof progress);
    progress.progress_monitor = kiln_jpeg_progress;
    if (setjmp(error.jump)) {
        int unsupported = error.warnings == 0 && kiln_jpeg_is_unsupported(error.base.msg_code);
        int foreign = error.warnings == 0 && error.base.msg_code == JERR_NO_SOI;
        jpeg_destroy_decompress(&info);
        snprintf(message, message_size, "%s", error.message);
        return foreign ? 4 : unsupported ? 3 : 1;
    }
    jpeg_create_decompress(&info);
    info.progress = &progress;
    jpeg_mem_src(&info, data, size);
    jpeg_read_header(&info, TRUE);
    *width = info.image_width;
    *height = info.image_height;
    if ((unsigned long long)info.image_width * info.image_height > max_pixels) {
        jpeg_destroy_decompress(&info);
        return 2;
    }
    jpeg_start_decompress(&info);
    row = (*info.mem->alloc_sarray)((j_common_ptr)&info, JPOOL_IMAGE, info.output_width * info.output_components, 1);
    while (info.output_scanline < info.output_height) jpeg_read_scanlines(&info, row, 1);
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    return 0;
}
