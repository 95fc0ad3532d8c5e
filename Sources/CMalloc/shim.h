/* glibc's malloc tuning (malloc.h is not part of Swift's Glibc module). */
#include <malloc.h>

/* Limits the malloc arenas to `count` (glibc's default is eight per core: one per thread that allocates). */
static inline void kiln_malloc_limit_arenas(int count) { (void)mallopt(M_ARENA_MAX, count); }

/* Hands the free memory of every arena back to the system. */
static inline void kiln_malloc_trim(void) { (void)malloc_trim(0); }
