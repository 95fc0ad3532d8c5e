/* ICU's collation, for sort keys, and its normalization and case folding, for text folding. ICU's own headers cannot be shown to Swift: Foundation ships a private copy of ICU
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


/* Normalization (NFC, NFD) and full case folding over UTF-16; conversions from and to UTF-8. UNormalizer2 stays
   opaque; the instances ICU returns are shared and thread-safe, and are never freed. */
typedef struct kiln_icu_normalizer kiln_icu_normalizer;

const kiln_icu_normalizer *U_ICU_ENTRY_POINT_RENAME(unorm2_getNFCInstance)(int *status);
const kiln_icu_normalizer *U_ICU_ENTRY_POINT_RENAME(unorm2_getNFDInstance)(int *status);
int32_t U_ICU_ENTRY_POINT_RENAME(unorm2_normalize)(const kiln_icu_normalizer *normalizer, const uint16_t *source,
                                                   int32_t length, uint16_t *destination, int32_t capacity, int *status);
int32_t U_ICU_ENTRY_POINT_RENAME(unorm2_spanQuickCheckYes)(const kiln_icu_normalizer *normalizer, const uint16_t *source,
                                                           int32_t length, int *status);
int32_t U_ICU_ENTRY_POINT_RENAME(u_strFoldCase)(uint16_t *destination, int32_t capacity, const uint16_t *source,
                                                int32_t length, uint32_t options, int *status);
uint16_t *U_ICU_ENTRY_POINT_RENAME(u_strFromUTF8)(uint16_t *destination, int32_t capacity, int32_t *length,
                                                  const char *source, int32_t sourceLength, int *status);
char *U_ICU_ENTRY_POINT_RENAME(u_strToUTF8)(char *destination, int32_t capacity, int32_t *length,
                                            const uint16_t *source, int32_t sourceLength, int *status);
int8_t U_ICU_ENTRY_POINT_RENAME(u_hasBinaryProperty)(int32_t codePoint, int property);

static inline const kiln_icu_normalizer *kiln_unorm2_nfc(int *status) {
    return U_ICU_ENTRY_POINT_RENAME(unorm2_getNFCInstance)(status);
}
static inline const kiln_icu_normalizer *kiln_unorm2_nfd(int *status) {
    return U_ICU_ENTRY_POINT_RENAME(unorm2_getNFDInstance)(status);
}
static inline int32_t kiln_unorm2_normalize(const kiln_icu_normalizer *normalizer, const uint16_t *source, int32_t length,
                                            uint16_t *destination, int32_t capacity, int *status) {
    return U_ICU_ENTRY_POINT_RENAME(unorm2_normalize)(normalizer, source, length, destination, capacity, status);
}
static inline int32_t kiln_unorm2_span_quick_check_yes(const kiln_icu_normalizer *normalizer, const uint16_t *source,
                                                       int32_t length, int *status) {
    return U_ICU_ENTRY_POINT_RENAME(unorm2_spanQuickCheckYes)(normalizer, source, length, status);
}
/* U_FOLD_CASE_DEFAULT = 0: full case folding without the Turkic special case for I. */
static inline int32_t kiln_u_str_fold_case(uint16_t *destination, int32_t capacity, const uint16_t *source,
                                           int32_t length, int *status) {
    return U_ICU_ENTRY_POINT_RENAME(u_strFoldCase)(destination, capacity, source, length, 0, status);
}
static inline int32_t kiln_u_str_from_utf8(uint16_t *destination, int32_t capacity, const char *source,
                                           int32_t length, int *status) {
    int32_t written = 0;
    U_ICU_ENTRY_POINT_RENAME(u_strFromUTF8)(destination, capacity, &written, source, length, status);
    return written;
}
static inline int32_t kiln_u_str_to_utf8(char *destination, int32_t capacity, const uint16_t *source, int32_t length,
                                         int *status) {
    int32_t written = 0;
    U_ICU_ENTRY_POINT_RENAME(u_strToUTF8)(destination, capacity, &written, source, length, status);
    return written;
}
/* UCHAR_GRAPHEME_EXTEND = 11: combining marks, enclosing marks and the other characters that extend a cluster. */
static inline int kiln_u_is_grapheme_extend(int32_t codePoint) {
    return U_ICU_ENTRY_POINT_RENAME(u_hasBinaryProperty)(codePoint, 11) != 0;
}
/* UCHAR_CHANGES_WHEN_CASEFOLDED = 54: the code points full case folding changes. */
static inline int kiln_u_changes_when_casefolded(int32_t codePoint) {
    return U_ICU_ENTRY_POINT_RENAME(u_hasBinaryProperty)(codePoint, 54) != 0;
}