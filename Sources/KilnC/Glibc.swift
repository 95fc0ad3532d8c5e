// The platform layer: every call Kiln makes that is particular to Linux and glibc (the allocator, thread priority,
// write(2) and fsync(2) by module name, signal dispositions, the terminal's width, `stat`'s fields) is in this file,
// so a port (macOS: Darwin's malloc zones, pthread QoS instead of a thread's nice value) has one file to write, with
// CGlibc's shim.h. The POSIX calls on paths the layers above make (stat, open, unlink, rename, fnmatch, strerror) are
// wrapped here too, Swift strings in and Swift values out; flock, close and kill on a descriptor or a number are the
// same on both. Kiln is built and tested on Linux only.
#if os(Linux)
internal import CGlibc
import Foundation
import Glibc

/// glibc's allocator, tuned for a build whose reader threads make rows that the staging writer's thread frees: each
/// allocating thread gets an arena of its own, and memory freed into an arena stays with the process. Without a
/// limit, a build's peak grows by what the finished staging threads left in their arenas; with too low a limit
/// (two), the build's threads (readers, shaper, writer, full-text indexing, SQLite's sorter) queue for the arenas'
/// locks: 8 arenas built the 5 000-page end-to-end input in 2.4 s against 2.8 s with 2, at the same peak memory.
///
/// Under a cap on the address space (`ulimit -v`, as CI runners and containers set) there is one arena: each other
/// arena reserves 64 MiB of address space, and a thread whose arena the cap refused retried that reservation on
/// every allocation (a failing 64 MiB `mmap` per `malloc`, seen in gdb), so that a capped build seemed hung.
package enum ProcessHeap {
    /// Keeps the allocator to a few arenas, one under an address-space cap; call once, before any thread starts.
    package static func limitArenas() {
        kiln_malloc_limit_arenas(addressSpaceLimit == nil ? 8 : 1)
    }

    /// The cap on the process's address space (`ulimit -v`, `RLIMIT_AS`) in bytes, or `nil` when there is none.
    package static var addressSpaceLimit: Int? {
        let limit = kiln_address_space_limit()
        return limit == 0 ? nil : Int(clamping: limit)
    }

    /// Returns the free memory of every arena to the system (after staging, and once the bundle's tables are
    /// written).
    package static func releaseFreeMemory() {
        kiln_malloc_trim()
    }
}

/// The scheduling priority of a build's own threads. A full-text index is one thread's work that the end of a build
/// waits for; the reader threads that parse later sources meanwhile have no such deadline, and step back for it.
package enum ThreadPriority {
    /// The nice value of a thread that steps back: CFS gives a nice-0 thread about nine times its share.
    package static let steppedBack: Int32 = 10

    /// Lowers the calling thread's priority for the rest of its life (an unprivileged thread cannot raise it again);
    /// false when the system refused.
    @discardableResult
    package static func stepBack() -> Bool {
        kiln_thread_set_nice(steppedBack) == 0
    }
}

/// Writes bytes to an open file descriptor with `write(2)`, retrying short writes and `EINTR`. Foundation's
/// `FileHandle.write(_:)` traps on a failed write and `print` drops the error; this returns it instead, so a full
/// disk, a closed descriptor, a closed pipe or a file-size limit reaches the caller as an error it can report.
package enum DescriptorWrite {
    /// Why a write failed: the `errno` value and the system's sentence for it.
    package struct Failure: Error, Equatable {
        package let code: Int32
        package let message: String
    }

    /// Writes all of `data` to `descriptor`.
    /// - Throws: `Failure` with `errno` when the system refuses a write.
    package static func write(_ data: Data, to descriptor: Int32) throws(Failure) {
        let failure = data.withUnsafeBytes { buffer -> Failure? in
            do throws(Failure) { try write(buffer, to: descriptor) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Writes all of `buffer` to `descriptor` (a wrapper's bytes as a C library handed them over, without a copy).
    /// - Throws: `Failure` with `errno` when the system refuses a write.
    package static func write(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) throws(Failure) {
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                throw Failure(code: code, message: SystemError.message(code))
            }
            offset += written
        }
    }
}

/// Descriptors 0, 1 and 2 as the process was started with them.
package enum StandardDescriptors {
    /// Gives each of descriptors 0, 1 and 2 that is closed a read-only `/dev/null`. Otherwise the next file Kiln opens
    /// would be given that number and receive what Kiln prints (`kiln build >&-`); with `/dev/null` opened read-only,
    /// a write to a closed stdout still fails (`EBADF`), as it should. Call once, before any file is opened.
    package static func reserve() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", O_RDONLY)
            if opened >= 0 && opened != descriptor {
                _ = dup2(opened, descriptor)
                _ = close(opened)
            }
        }
    }
}

/// Syncs an open file descriptor (`fsync(2)`), for `FileSync`.
package enum DescriptorSync {
    /// True when the file's data reached the disk; on false, `errno` says why.
    package static func sync(_ descriptor: Int32) -> Bool { Glibc.fsync(descriptor) == 0 }

    /// Starts writing the file's dirty pages to disk without waiting (`sync_file_range(2)`); false when the system
    /// refused (then the fsync does it all).
    package static func startWriteback(_ descriptor: Int32) -> Bool { kiln_start_writeback(descriptor) == 0 }

    /// Writes every dirty page of the file system holding the open file to disk (`syncfs(2)`): one call after many
    /// files were renamed into place, instead of an fsync each; false on failure.
    package static func syncFileSystem(_ descriptor: Int32) -> Bool { kiln_sync_file_system(descriptor) == 0 }
}

/// Signal dispositions and the exit a signal handler may make, for the command line's interruption handling.
package enum ProcessSignals {
    /// Ignores `signal` (its default action no longer runs; a dispatch source may still observe it).
    package static func ignore(_ signal: Int32) {
        _ = Glibc.signal(signal, SIG_IGN)
    }

    /// Ends the process at once with `status`, without atexit handlers or stdio flushing (`_exit(2)`): what a
    /// signal handler that has cleaned up may do.
    package static func exitNow(_ status: Int32) -> Never {
        Glibc._exit(status)
    }
}

/// Threads started with `pthread_create`, which says when the system cannot start one (a cap on the address space
/// refusing its stack): Foundation's `Thread.start` gave no sign, and whoever waited for the thread waited forever.
package enum SystemThread {
    /// Starts `work` on a new detached thread named `name` (its first 15 bytes, as `top -H` shows it).
    /// - Returns: 0, or the system's error number when no thread was started (`work` is then never run).
    package static func start(name: String, _ work: @escaping @Sendable () -> Void) -> Int32 {
        let box = Unmanaged.passRetained(ThreadWork(name: name, work: work)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { pointer in
            guard let pointer else { return nil }
            let started = Unmanaged<ThreadWork>.fromOpaque(pointer).takeRetainedValue()
            kiln_thread_set_name(started.name)
            started.work()
            return nil
        }, box)
        if result != 0 { Unmanaged<ThreadWork>.fromOpaque(box).release() }
        return result
    }

    /// What a new thread runs, handed to it through `pthread_create`'s one pointer.
    private final class ThreadWork {
        let name: String
        let work: @Sendable () -> Void

        init(name: String, work: @escaping @Sendable () -> Void) {
            self.name = name
            self.work = work
        }
    }
}

/// The terminal a standard descriptor is open on, if any.
package enum Terminal {
    /// True when `descriptor` is a terminal (`isatty(3)`).
    package static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    /// The terminal's width in columns; `nil` when `descriptor` is no terminal or its size is not set (0).
    package static func columns(_ descriptor: Int32) -> Int? {
        let columns = kiln_terminal_columns(descriptor)
        return columns > 0 ? Int(columns) : nil
    }
}

/// The POSIX advisory locks (`fcntl`) other processes hold on a file: SQLite's way of saying that a connection reads
/// or writes a database (rollback journal) or has it open (write-ahead log, on the `-shm` file).
package enum AdvisoryLocks {
    /// True when another process holds a lock on any byte of `ranges` in the file at `path` — any lock, or with
    /// `writersOnly` a write lock (SQLite's reserved, pending and exclusive locks; not a reader's shared lock); false
    /// when none does or the file does not exist.
    /// - Throws: the system's sentence when the file exists but cannot be opened or asked.
    package static func heldElsewhere(_ path: String, ranges: [(start: Int64, length: Int64)], writersOnly: Bool = false) throws(DescriptorWrite.Failure) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return false }
            throw DescriptorWrite.Failure(code: code, message: SystemError.message(code))
        }
        // Closing a descriptor drops this process's locks on the file: SQLite's connections in this process must
        // not be open on it (Kiln asks before it opens a bundle).
        defer { close(descriptor) }
        for range in ranges {
            switch kiln_lock_held_elsewhere(descriptor, range.start, range.length, Int16(writersOnly ? F_RDLCK : F_WRLCK)) {
            case 0: continue
            case 1: return true
            default:
                let code = errno
                throw DescriptorWrite.Failure(code: code, message: SystemError.message(code))
            }
        }
        return false
    }
}

/// The CPU time the calling thread has used: for budgets of a reader's own work, which a wait on another thread (the
/// staging writer's queue) does not spend.
package enum ThreadCPUClock {
    /// Seconds of CPU time the calling thread has used so far.
    package static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// What `stat(2)` says of a file, as Swift values: which file it is (device and inode), its type, size and times.
package struct FileStatus: Sendable {
    package let device: UInt64
    package let inode: UInt64
    /// The type bits of the mode (`st_mode & S_IFMT`), to compare with `S_IFREG`, `S_IFDIR`, `S_IFLNK`…
    package let type: UInt32
    package let size: Int64
    /// The last modification of the data and of the status (`st_mtim`, `st_ctim`), in nanoseconds since 1970.
    package let modified: Int64
    package let changed: Int64

    /// The file at `path` (the link itself when `followingLinks` is false), or `nil` when there is none.
    package init?(path: String, followingLinks: Bool = true) {
        var status = stat()
        guard (followingLinks ? stat(path, &status) : lstat(path, &status)) == 0 else { return nil }
        self.init(status)
    }

    /// The file open on `descriptor`, or `nil` when the system cannot say.
    package init?(descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        self.init(status)
    }

    private init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        type = UInt32(status.st_mode & S_IFMT)
        size = Int64(status.st_size)
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        changed = Int64(status.st_ctim.tv_sec) * 1_000_000_000 + Int64(status.st_ctim.tv_nsec)
    }
}

/// `open(2)`, `unlink(2)`, `rename(2)` and `fnmatch(3)` on Swift strings; on failure `errno` says why
/// (`SystemError.lastMessage`).
package enum FileCalls {
    /// The new descriptor, or -1.
    package static func open(_ path: String, _ flags: Int32, mode: UInt32 = 0) -> Int32 {
        Glibc.open(path, flags, mode_t(mode))
    }

    /// Closes `descriptor`.
    package static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    /// True when the entry at `path` was removed.
    @discardableResult
    package static func unlink(_ path: String) -> Bool {
        Glibc.unlink(path) == 0
    }

    /// True when `new` was made a second name of the file `existing` names (a hard link).
    package static func link(_ existing: String, as new: String) -> Bool {
        Glibc.link(existing, new) == 0
    }

    /// A descriptor of a new file without a name in `folder`, open for writing (`O_TMPFILE`), or -1 with `errno` set
    /// where the file system cannot make one (then a named temporary file does the job).
    package static func openUnnamed(in folder: String, mode: UInt32 = 0o644) -> Int32 {
        kiln_open_unnamed(folder, mode)
    }

    /// True when the file open on `descriptor` (one `openUnnamed` made) got the name `path`; false with `errno` set,
    /// `EEXIST` when the name is taken (a link never replaces).
    package static func link(descriptor: Int32, as path: String) -> Bool {
        kiln_link_descriptor(descriptor, path) == 0
    }

    /// True when `source` was renamed to `destination` (replacing it in one step).
    package static func rename(_ source: String, to destination: String) -> Bool {
        Glibc.rename(source, destination) == 0
    }

    /// True when the entries at `first` and `second` (on one file system) swapped names in one step; false with
    /// `errno` set, `EINVAL` or `ENOSYS` where the file system or the kernel cannot swap, `EXDEV` across file systems.
    package static func exchange(_ first: String, _ second: String) -> Bool {
        kiln_rename_exchange(first, second) == 0
    }

    /// True when the empty folder at `path` was removed (`rmdir(2)`).
    @discardableResult
    package static func removeFolder(_ path: String) -> Bool {
        Glibc.rmdir(path) == 0
    }

    /// True when `name` matches the shell wildcard `pattern` (`*`, `?`, `[…]`; no flags).
    package static func matches(_ name: String, pattern: String) -> Bool {
        fnmatch(pattern, name, 0) == 0
    }
}

/// The system's sentences for `errno` values (`strerror(3)`).
package enum SystemError {
    /// The sentence for `code`, e.g. "No space left on device".
    package static func message(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// The sentence for the current `errno`.
    package static var lastMessage: String { message(errno) }
}
#else
#error("Kiln's platform layer (this file and Sources/CGlibc/shim.h) is written for Linux and glibc only; port it here.")
#endif
