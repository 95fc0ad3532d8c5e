/* ICU's collation, for sort keys. ICU's own headers cannot be shown to Swift: Foundation ships a private copy of ICU
   (_FoundationICU) whose types (UErrorCode…) have other definitions, and Clang refuses the two in one program. So
   this shim includes only ICU's version header (macros, no types) and declares the few C functions Kiln calls with
   plain C types of the same size: UCollator stays opaque, UErrorCode is an int-sized enum, UChar is UTF-16. Each
   name goes through ICU's own renaming macro (ucol_open -> ucol_open_72), so the linker checks the version. */
#include <stdint.h>
#include <unicode/uvernum.h>

typedef struct kiln_icu_collator kiln_icu_collator;

kiln_icu_collator *U_ICU_ENTRY_POINT_RENAME(ucol_open)(const char *locale, int *status);
void U_ICU_ENTRY_POINT_RENAME(ucol_close)(kiln_icu_collator *collator);
int32_t U_ICU_ENTRY_POINT_RENAME(ucol_getSortKey)(const kiln_icu_collator *collator, const uint16_t *source,
                                                  int32_t sourceLength, uint8_t *result, int32_t resultLength);
const char *U_ICU_ENTRY_POINT_RENAME(ucol_getLocaleByType)(const kiln_icu_collator *collator, int type, int *status);
const char *U_ICU_ENTRY_POINT_RENAME(u_errorName)(int code);

static inline kiln_icu_collator *kiln_ucol_open(const char *locale, int *status) {
    return U_ICU_ENTRY_POINT_RENAME(ucol_open)(locale, status);
}
static inline void kiln_ucol_close(kiln_icu_collator *collator) { U_ICU_ENTRY_POINT_RENAME(ucol_close)(collator); }
static inline int32_t kiln_ucol_sort_key(const kiln_icu_collator *collator, const uint16_t *source, int32_t length,
                                         uint8_t *result, int32_t capacity) {
    return U_ICU_ENTRY_POINT_RENAME(ucol_getSortKey)(collator, source, length, result, capacity);
}
/* ULOC_VALID_LOCALE = 1: the most specific locale the collator has data for ("root" when none). */
static inline const char *kiln_ucol_valid_locale(const kiln_icu_collator *collator, int *status) {
    return U_ICU_ENTRY_POINT_RENAME(ucol_getLocaleByType)(collator, 1, status);
}
static inline const char *kiln_u_error_name(int code) { return U_ICU_ENTRY_POINT_RENAME(u_errorName)(code); }
