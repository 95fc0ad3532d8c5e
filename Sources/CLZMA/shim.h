#include <lzma.h>

/* LZMA_CONCATENATED is a function-like macro (UINT32_C), which Swift does not import. */
static const uint32_t kiln_lzma_concatenated = LZMA_CONCATENATED;
