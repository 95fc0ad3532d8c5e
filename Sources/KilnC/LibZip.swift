internal import CLibZip
import Foundation

/// Writes ZIP archives with libzip. Every entry is deflated and stamped with one fixed time, in the order given,
/// so the same files give the same bytes. libzip writes a temporary file beside the archive and renames it into
/// place when complete, so a failed write leaves any previous archive as it was.
package enum ZipArchiveWriter {
    /// The time every entry carries: 2000-01-01 00:00 as the ZIP format records it (local MS-DOS time).
    package static let entryDate = DateComponents(year: 2000, month: 1, day: 1, hour: 0, minute: 0, second: 0)

    /// Writes `entries` (the name inside the archive, the file to read) into a new archive at `url`; messages name
    /// the archive as `name` (the file `url` will be renamed to, when `url` is a temporary file).
    /// - Throws: `LibraryFailure` when a file cannot be read or the archive cannot be written.
    package static func write(_ entries: [(name: String, file: URL)], to url: URL, named name: URL? = nil) throws {
        let shown = (name ?? url).path
        var code: Int32 = 0
        guard let archive = zip_open(url.path, ZIP_CREATE | ZIP_TRUNCATE, &code) else {
            var error = zip_error_t()
            zip_error_init_with_code(&error, code)
            defer { zip_error_fini(&error) }
            throw LibraryFailure("cannot create \(shown): \(String(cString: zip_error_strerror(&error)))")
        }
        func failure(_ what: String) -> LibraryFailure {
            let message = String(cString: zip_strerror(archive))
            zip_discard(archive)
            return LibraryFailure("cannot write \(shown): \(what): \(message)")
        }
        let stamp = time_t(localStamp())
        for (name, file) in entries {
            let data: Data
            do { data = try Data(contentsOf: file) } catch {
                zip_discard(archive)
                throw LibraryFailure("cannot read \(file.path): \(error.localizedDescription)")
            }
            // libzip frees the copy (freep = 1) once the archive is written or discarded.
            let copy = malloc(max(data.count, 1))
            guard let copy else { zip_discard(archive); throw LibraryFailure("cannot write \(shown): out of memory") }
            data.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { copy.copyMemory(from: base, byteCount: bytes.count) }
            }
            guard let source = zip_source_buffer(archive, copy, zip_uint64_t(data.count), 1) else {
                free(copy)
                throw failure("entry \(name)")
            }
            let index = zip_file_add(archive, name, source, zip_flags_t(ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE))
            guard index >= 0 else {
                zip_source_free(source)
                throw failure("entry \(name)")
            }
            guard zip_set_file_compression(archive, zip_uint64_t(index), ZIP_CM_DEFLATE, 9) == 0,
                  zip_file_set_mtime(archive, zip_uint64_t(index), stamp, 0) == 0 else {
                throw failure("entry \(name)")
            }
        }
        guard zip_close(archive) == 0 else { throw failure("closing") }
    }

    /// The Unix time whose local time is `entryDate`: libzip converts to MS-DOS time in the local time zone, so this
    /// makes the recorded time, and the bytes, the same in every time zone.
    private static func localStamp() -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone.current
        return Int(calendar.date(from: entryDate)?.timeIntervalSince1970 ?? 946_684_800)
    }
}
