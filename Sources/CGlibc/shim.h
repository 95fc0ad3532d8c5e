/* glibc calls that Swift's Glibc module does not import: malloc tuning (malloc.h), the calling thread's id, early
   writeback and the terminal's width (ioctl is variadic, which Swift does not import). Linux only: see Sources/KilnC/Glibc.swift. */
#ifdef __linux__
#include <malloc.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/* Limits the malloc arenas to `count` (glibc's default is eight per core: one per thread that allocates). */
static inline void kiln_malloc_limit_arenas(int count) { (void)mallopt(M_ARENA_MAX, count); }

/* Names the calling thread (its first 15 bytes) as debuggers and `top -H` show it: prctl(2) PR_SET_NAME, which is
   variadic (Swift cannot call it) where pthread_setname_np needs _GNU_SOURCE. */
static inline void kiln_thread_set_name(const char *name) { (void)prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0); }

/* The soft limit on the process's address space (RLIMIT_AS, `ulimit -v`) in bytes; 0 when there is none. */
static inline unsigned long long kiln_address_space_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 0;
    return (unsigned long long)limit.rlim_cur;
}

/* Hands the free memory of every arena back to the system. */
static inline void kiln_malloc_trim(void) { (void)malloc_trim(0); }

/* Raises the nice value of the calling thread alone (Linux schedules threads, not processes, by nice value) to
   `nice`; 0 on success. Without privileges it can only go up. */
static inline int kiln_thread_set_nice(int nice) { return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice); }

/* Starts writing the dirty pages of the open file `fd` to disk without waiting for them (sync_file_range(2) with
   SYNC_FILE_RANGE_WRITE over the whole file), so that a later fsync has less left to wait for; 0 on success.
   The system call, because glibc declares its wrapper only under _GNU_SOURCE. */
static inline int kiln_start_writeback(int fd) { return (int)syscall(SYS_sync_file_range, fd, (long long)0, (long long)0, 2 /* SYNC_FILE_RANGE_WRITE */); }

/* Writes every dirty page of the file system holding the open file `fd` to disk (syncfs(2)); 0 on success. The system
   call, because glibc declares its wrapper only under _GNU_SOURCE. */
static inline int kiln_sync_file_system(int fd) { return (int)syscall(SYS_syncfs, fd); }

/* Swaps the entries at `first` and `second` in one step (renameat2(2) with RENAME_EXCHANGE): both must exist on the
   same file system; 0 on success, -1 with errno (EINVAL or ENOSYS where the file system or kernel cannot, EXDEV
   across file systems). The system call, because glibc declares its wrapper only under _GNU_SOURCE. */
static inline int kiln_rename_exchange(const char *first, const char *second) {
    return (int)syscall(SYS_renameat2, AT_FDCWD, first, AT_FDCWD, second, 2 /* RENAME_EXCHANGE */);
}

/* Opens a new file with no name in the folder `folder` for writing (open(2) with O_TMPFILE, mode `mode`): it gets a
   name only when `kiln_link_descriptor` gives it one, and vanishes when closed without one. -1 with errno where the
   file system or kernel cannot (EOPNOTSUPP, EISDIR, EINVAL). __O_TMPFILE, because glibc names O_TMPFILE only under
   _GNU_SOURCE. */
static inline int kiln_open_unnamed(const char *folder, unsigned int mode) {
    return open(folder, __O_TMPFILE | O_WRONLY | O_CLOEXEC, (mode_t)mode);
}

/* Gives the open file `fd` the name `path` (linkat(2) through /proc/self/fd, which needs no privilege where
   AT_EMPTY_PATH does): 0 on success, -1 with errno (EEXIST when the name is taken). */
static inline int kiln_link_descriptor(int fd, const char *path) {
    char name[32];
    snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, name, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

/* The width in columns of the terminal open on `descriptor`; 0 when it is not a terminal or its size is not set. */
static inline int kiln_terminal_columns(int descriptor) {
    struct winsize size;
    return ioctl(descriptor, TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
}

#include <fcntl.h>

/* Whether another process holds a POSIX advisory lock (fcntl, the kind SQLite takes) on bytes
   [start, start + length) of the open file `fd` that conflicts with a lock of type `type` (F_WRLCK: any lock;
   F_RDLCK: write locks only): 1 when one does, 0 when none does, -1 with errno on failure. F_GETLK never reports
   the calling process's own locks. */
static inline int kiln_lock_held_elsewhere(int fd, long long start, long long length, short type) {
    struct flock probe = { .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)start, .l_len = (off_t)length };
    if (fcntl(fd, F_GETLK, &probe) != 0) return -1;
    return probe.l_type == F_UNLCK ? 0 : 1;
}
#endif
