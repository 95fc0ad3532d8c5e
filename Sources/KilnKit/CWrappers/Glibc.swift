import CGlibc
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// glibc's allocator, tuned for a build whose reader threads make rows that the staging writer's thread frees: each
/// allocating thread gets an arena of its own, and memory freed into an arena stays with the process. Without a
/// limit, a build's peak grows by what the finished staging threads left in their arenas; with too low a limit
/// (two), the build's threads (readers, shaper, writer, full-text indexing, SQLite's sorter) queue for the arenas'
/// locks: 8 arenas built the 5 000-page end-to-end input in 2.4 s against 2.8 s with 2, at the same peak memory.
public enum ProcessHeap {
    /// Keeps the allocator to a few arenas; call once, before any thread starts.
    public static func limitArenas() {
        kiln_malloc_limit_arenas(8)
    }

    /// Returns the free memory of every arena to the system (after staging, and once the bundle's tables are
    /// written).
    public static func releaseFreeMemory() {
        kiln_malloc_trim()
    }
}

/// The scheduling priority of a build's own threads. A full-text index is one thread's work that the end of a build
/// waits for; the reader threads that parse later sources meanwhile have no such deadline, and step back for it.
public enum ThreadPriority {
    /// The nice value of a thread that steps back: CFS gives a nice-0 thread about nine times its share.
    public static let steppedBack: Int32 = 10

    /// Lowers the calling thread's priority for the rest of its life (an unprivileged thread cannot raise it again);
    /// false when the system refused.
    @discardableResult
    public static func stepBack() -> Bool {
        kiln_thread_set_nice(steppedBack) == 0
    }
}

/// Writes bytes to an open file descriptor with `write(2)`, retrying short writes and `EINTR`. Foundation's
/// `FileHandle.write(_:)` traps on a failed write and `print` drops the error; this returns it instead, so a full
/// disk, a closed descriptor, a closed pipe or a file-size limit reaches the caller as an error it can report.
public enum DescriptorWrite {
    /// Why a write failed: the `errno` value and the system's sentence for it.
    public struct Failure: Error, Equatable {
        public let code: Int32
        public let message: String
    }

    /// Writes all of `data` to `descriptor`.
    /// - Throws: `Failure` with `errno` when the system refuses a write.
    public static func write(_ data: Data, to descriptor: Int32) throws(Failure) {
        var offset = 0
        while offset < data.count {
            let written = data.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(descriptor, base + offset, buffer.count - offset)
            }
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                throw Failure(code: code, message: String(cString: strerror(code)))
            }
            offset += written
        }
    }
}

/// Descriptors 0, 1 and 2 as the process was started with them.
public enum StandardDescriptors {
    /// Gives each of descriptors 0, 1 and 2 that is closed a read-only `/dev/null`. Otherwise the next file Kiln opens
    /// would be given that number and receive what Kiln prints (`kiln build >&-`); with `/dev/null` opened read-only,
    /// a write to a closed stdout still fails (`EBADF`), as it should. Call once, before any file is opened.
    public static func reserve() {
        for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let opened = open("/dev/null", O_RDONLY)
            if opened >= 0 && opened != descriptor {
                _ = dup2(opened, descriptor)
                _ = close(opened)
            }
        }
    }
}

/// The CPU time the calling thread has used: for budgets of a reader's own work, which a wait on another thread (the
/// staging writer's queue) does not spend.
public enum ThreadCPUClock {
    /// Seconds of CPU time the calling thread has used so far.
    public static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
