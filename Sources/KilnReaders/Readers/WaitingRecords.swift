/// Records that ended before a context value of something around them was read — a JSON member written after the
/// records, an XML child element after them — waiting, in document order, until the object or element holding the
/// value closes. Both the `json` and the `xml` reader keep their late records here: a record goes out as soon as
/// nothing it needs is missing and no earlier record still waits, and the records waiting take at most `limit`
/// bytes (estimated from their values). What a reader does beyond the bound is its own (`overflow`): the `json`
/// reader lets them go and reads the file a second time, the `xml` reader ships them and says so.
package struct WaitingRecords {
    /// The default bound on the bytes of records waiting (16 MiB).
    package static let defaultLimit = 16 << 20

    /// A record that waits, and what it still needs: each entry a `key` (the context object or element, as the
    /// reader numbers them) and a `field` there.
    package struct Entry {
        package var record: Record
        package var ordinal: Int
        package var missing: [(key: Int, field: Int)]
        package var bytes: Int
    }

    package let limit: Int
    private var entries: [Entry] = []
    private var head = 0
    private var bytes = 0

    package init(limit: Int) {
        self.limit = limit
    }

    /// True when no record waits.
    package var isEmpty: Bool { head == entries.count }

    /// The ordinal of the last record waiting, if any.
    package var lastOrdinal: Int? { isEmpty ? nil : entries.last?.ordinal }

    /// `limit` for messages: `16 MiB`, `1500 bytes`.
    package var limitText: String { limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit) bytes" }

    /// A record has ended, `missing` what it still needs. It goes out at once when nothing is missing and no earlier
    /// record waits; otherwise it waits. Returns the first record waiting when the records waiting exceed the bound
    /// (nothing is emitted or dropped then: the reader calls `letGo()` or `flush(all: true)`).
    package mutating func add(_ record: Record, ordinal: Int, missing: [(key: Int, field: Int)],
                              emit: (Record) throws -> Void) throws -> Entry? {
        if missing.isEmpty, isEmpty {
            try emit(record)
            return nil
        }
        let size = record.values.reduce(64) { $0 + 16 + ($1?.utf8.count ?? 0) }
        entries.append(Entry(record: record, ordinal: ordinal, missing: missing, bytes: size))
        bytes += size
        return try flush(all: false, emit: emit)
    }

    /// The context object or element `key`, around the records from `firstOrdinal` on, has closed: `fill` gives the
    /// waiting records its final values (one call per record and field it needed). Returns how many records waited
    /// for it, and the overflow as `add` does.
    @discardableResult
    package mutating func settle(key: Int, firstOrdinal: Int, emit: (Record) throws -> Void,
                                 fill: (inout Record, Int) -> Void) throws -> (waited: Int, overflow: Entry?) {
        var index = entries.count - 1
        var waited = 0
        while index >= head, entries[index].ordinal >= firstOrdinal {
            var waiting = entries[index]
            var needed = false
            for entry in waiting.missing where entry.key == key {
                fill(&waiting.record, entry.field)
                needed = true
            }
            if needed {
                waiting.missing.removeAll { $0.key == key }
                entries[index] = waiting
                waited += 1
            }
            index -= 1
        }
        return (waited, try flush(all: false, emit: emit))
    }

    /// Emits the waiting records whose context is complete, in order (with `all`, every one, with what is known:
    /// the document ended, or the reader ships them beyond the bound). Returns the first record waiting when the
    /// records waiting exceed the bound.
    @discardableResult
    package mutating func flush(all: Bool, emit: (Record) throws -> Void) throws -> Entry? {
        while head < entries.count {
            let first = entries[head]
            if !first.missing.isEmpty, !all {
                guard bytes > limit else { break }
                return first
            }
            entries[head] = Entry(record: Record(first.record.kind, line: 0), ordinal: 0, missing: [], bytes: 0)
            head += 1
            bytes -= first.bytes
            try emit(first.record)
        }
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
        return nil
    }

    /// Lets every waiting record go without emitting it (the `json` reader reads them again in a second pass).
    package mutating func letGo() {
        entries = []
        head = 0
        bytes = 0
    }
}
