#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import: these helpers bind copies.
static inline int kiln_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

static inline int kiln_sqlite3_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

static inline void kiln_sqlite3_result_text(sqlite3_context *context, const char *text, int length) {
    sqlite3_result_text(context, text, length, SQLITE_TRANSIENT);
}
