/// The session extension (changesets: `kiln patch`, `kiln apply`) is declared only under these two options, which
/// Debian's libsqlite3 is built with.
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import: these helpers bind copies.
static inline int kiln_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

/* An empty blob is bound as a blob of no bytes (sqlite3_bind_blob with no bytes would bind NULL). */
static inline int kiln_sqlite3_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    if (length == 0) return sqlite3_bind_zeroblob(statement, index, 0);
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

/// sqlite3_config is variadic: Swift cannot call it. Turns off SQLite's memory statistics, which take a global
/// mutex on every allocation (8 % of the instructions of an FTS5 index build); Kiln never reads them. Must run
/// before the library initializes (the first connection opened); later calls return SQLITE_MISUSE and change nothing.
static inline int kiln_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/// sqlite3_db_config is variadic: Swift cannot call it. Hardens a connection that runs SQL from an input file:
/// defensive mode (no writes to the schema or shadow tables by hand), schemas not trusted (functions with side
/// effects refused in views and triggers), extensions not loadable.
static inline int kiln_sqlite3_harden(sqlite3 *db) {
    int result = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
    if (result == SQLITE_OK) result = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0);
    if (result == SQLITE_OK) result = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)0);
    return result;
}

static inline void kiln_sqlite3_result_text(sqlite3_context *context, const char *text, int length) {
    sqlite3_result_text(context, text, length, SQLITE_TRANSIENT);
}

static inline void kiln_sqlite3_result_blob(sqlite3_context *context, const void *bytes, int length) {
    sqlite3_result_blob(context, bytes, length, SQLITE_TRANSIENT);
}
