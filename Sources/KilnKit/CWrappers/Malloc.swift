import CMalloc

/// glibc's allocator, tuned for a build whose reader threads make rows that the staging writer's thread frees: each
/// allocating thread gets an arena of its own, and memory freed into an arena stays with the process. Without this,
/// a build's peak grows by what the finished staging threads left in their arenas.
public enum ProcessHeap {
    /// Keeps the allocator to a few arenas; call once, before any thread starts.
    public static func limitArenas() {
        kiln_malloc_limit_arenas(2)
    }

    /// Returns the free memory of every arena to the system (after staging, before the bundle is written).
    public static func releaseFreeMemory() {
        kiln_malloc_trim()
    }
}
