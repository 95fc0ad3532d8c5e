import CGlibc

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
