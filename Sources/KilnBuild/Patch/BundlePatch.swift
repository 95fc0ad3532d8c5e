import Foundation
import Synchronization
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// `kiln patch`: the patches that turn the bundle an app ships (OLD) into a new one (NEW) — a plain SQL patch, an
/// SQLite changeset and the update manifest — each applied to a copy of OLD and compared with NEW before anything is
/// written.
public enum BundlePatch {
    /// Makes, verifies and writes the patches from `old` to `new` into the folder `out`.
    /// - Parameter userFilled: the tables the app fills (the manifest's `userFilled`), which no patch touches.
    /// - Returns: the update manifest written, why there is no changeset when there is none (`nil` otherwise), and the
    ///   bytes of the changeset each full-text or R*Tree shadow table changed takes (`shadowBytes(new:old:layout:)`).
    /// - Throws: `KilnError.validation` with one sentence when a file is not a Kiln bundle, when a patch is the wrong
    ///   answer (another bundle, a new schema version or schema, a patch over the limit: the app must download the
    ///   full bundle), or when a patch applied to a copy of OLD does not give NEW; `KilnError.usage` for an output
    ///   that may not be written; `KilnError.io` when a file cannot be read or written. Nothing is written then.
    public static func make(old: URL, new: URL, out: URL, userFilled: Set<String>, limit: PatchSizeLimit = .default,
                            names: OutputNames = OutputNames(output: "the patch folder")) throws -> (manifest: UpdateManifest, noChangeset: String?, shadowBytes: [String: Int]) {
        let files = [UpdateManifest.sqlFileName, UpdateManifest.changesetFileName, UpdateManifest.fileName].map { out.appendingPathComponent($0) }
        let protected = [OutputPath.Protected(old, "OLD"), OutputPath.Protected(new, "NEW")]
        try OutputPath.checkFolder(out, named: names.output, protected: protected)
        for file in files { try OutputPath.checkFile(file, named: names.output, protected: protected) }

        let oldName = try BundleFile.name(of: old), newName = try BundleFile.name(of: new)
        let newSize = OutputPath.size(of: new) ?? 0, oldSize = OutputPath.size(of: old) ?? 0
        func refuse(_ reason: String) -> KilnError {
            KilnError.validation("no patch: \(reason); the app must download the full bundle (\(new.relativePath): \(newSize) bytes)")
        }
        guard oldName == newName else {
            throw refuse("\(old.relativePath) is a bundle of \"\(oldName)\" but \(new.relativePath) of \"\(newName)\"")
        }
        let database = try BundleFile.open(old, attaching: new, as: "new")
        do {
            let before = try BundleLayout(database, schema: "main", userFilled: userFilled)
            let after = try BundleLayout(database, schema: "new", userFilled: userFilled)
            guard before.userVersion == after.userVersion else {
                throw refuse("\(new.relativePath) has schema version \(after.userVersion), \(old.relativePath) \(before.userVersion)")
            }
            guard before.schema == after.schema else {
                throw refuse("the schema changed (\(after.schemaChanges(from: before).joined(separator: ", "))) although the schema version is still \(after.userVersion)")
            }
            var sql = try SQLPatchWriter(database: database, layout: after, oldMetadata: try BundleFile.metadata(of: database) ?? [:])
            let text = Data(try sql.write().utf8)
            let changeset = try self.changeset(new: new, old: old, layout: after)
            let shadowBytes = changeset == nil ? [:] : try self.shadowBytes(new: new, old: old, layout: after)
            let allowed = limit.bytes(of: newSize)
            if text.count > allowed {
                throw refuse("the SQL patch would be \(text.count) bytes, more than \(limit.phrase) (\(allowed) bytes)")
            }
            // The changeset carries the full-text indexes' own pages, which a rebuilt index changes throughout: when
            // that makes it larger than the limit (or there is none), only the SQL patch is written.
            let writesChangeset = changeset.map { $0.count <= allowed } ?? false
            // Why there is no changeset, when there is none: which tables lack a key, or how large it would be.
            let keyless = after.tables.filter(\.key.isEmpty).map(\.name)
            let noChangeset: String? = writesChangeset ? nil : keyless.isEmpty
                ? "it would be \(changeset?.count ?? 0) bytes, more than the limit (\(allowed) bytes; it carries the full-text indexes' own rows)"
                : "\(keyless.count == 1 ? "table" : "tables") \(keyless.joined(separator: ", ")) \(keyless.count == 1 ? "has" : "have") no primary key, and SQLite's session extension records only tables with one"
            let fromDigest = try ContentDigest.of(before.tables, in: database, schema: "main")
            let toDigest = try ContentDigest.of(after.tables, in: database, schema: "new")
            try verify(old: old, new: new, layout: after, label: "the SQL patch") { try PatchKind.sql.apply(Array(text), to: $0, layout: after) }
            if writesChangeset {
                try verify(old: old, new: new, layout: after, label: "the changeset") { try PatchKind.changeset.apply(changeset ?? [], to: $0, layout: after) }
            }

            let manifest = UpdateManifest(
                format: "kiln-update-1", bundle: newName, schemaVersion: after.userVersion,
                from: .init(digest: fromDigest, bytes: oldSize), to: .init(digest: toDigest, bytes: newSize),
                tables: sql.changes, userFilled: userFilled.sorted(), indexes: sql.indexChanges, rebuiltFullText: sql.rebuiltFullText,
                limitBytes: allowed,
                patches: [UpdateManifest.PatchFile.describe(UpdateManifest.sqlFileName, PatchKind.sql, Array(text))]
                    + (writesChangeset ? [UpdateManifest.PatchFile.describe(UpdateManifest.changesetFileName, PatchKind.changeset, changeset ?? [])] : []))
            var json = try KilnJSON.encode(manifest)
            json.append(10)
            try database.close()
            // The folder changes as a whole: a changeset left from an earlier patch would not match this manifest.
            for file in files + [out] { BuildFiles(destination: file).removeStale() }
            try AtomicFolder.write([(UpdateManifest.sqlFileName, text)]
                                   + (writesChangeset ? [(UpdateManifest.changesetFileName, Data(changeset ?? []))] : [])
                                   + [(UpdateManifest.fileName, json)],
                                   dropping: writesChangeset ? [] : [UpdateManifest.changesetFileName], into: out)
            return (manifest, noChangeset, shadowBytes)
        } catch let error as SQLiteError {
            if let stopped = BundleReadLimit.current.stopped(error, reading: [old, new]) { throw stopped }
            if error.isStorageFailure || error.isOutOfMemory {
                throw KilnError.io("cannot make the patch from \(old.relativePath) to \(new.relativePath): \(error.message); nothing was written")
            }
            throw KilnError.validation("no patch from \(old.relativePath) to \(new.relativePath): SQLite cannot read them (\(error.message))")
        }
    }

    /// The changeset of every covered table and every shadow table of the FTS5 and R*Tree tables: applied, it leaves
    /// their rows, and so the indexes, exactly as in NEW; `nil` when a covered table has no primary key.
    private static func changeset(new: URL, old: URL, layout: BundleLayout) throws -> [UInt8]? {
        let database = try BundleFile.open(new, attaching: old, as: "old")
        // The session extension leaves out tables without a primary key: no changeset then.
        guard layout.tables.allSatisfy({ !$0.key.isEmpty }) else { return nil }
        return try SQLiteChangeset.diff(database, from: "old", tables: layout.tables.map(\.name) + layout.shadows)
    }

    /// The bytes each shadow table of the full-text and R*Tree indexes takes in the changeset, for those it changes:
    /// the changeset carries their rows (an FTS5 index's segments hold many rows' terms each, so one changed row
    /// rewrites whole segments) where the SQL patch rebuilds the index from the table's rows. A changeset is the
    /// concatenation of its tables' changes, so each table's share is its own changeset's size.
    private static func shadowBytes(new: URL, old: URL, layout: BundleLayout) throws -> [String: Int] {
        let database = try BundleFile.open(new, attaching: old, as: "old")
        var bytes: [String: Int] = [:]
        for shadow in layout.shadows {
            let size = try SQLiteChangeset.diff(database, from: "old", tables: [shadow]).count
            if size > 0 { bytes[shadow] = size }
        }
        return bytes
    }

    /// Applies a patch to a scratch copy of `old` in the temporary folder and compares the copy with `new`.
    /// - Throws: `KilnError.validation` naming what differs; `KilnError.io` when the copy cannot be made or written
    ///   (a full `TMPDIR` is no verdict on the patch). Nothing is written then, and the copy and its journal are gone.
    private static func verify(old: URL, new: URL, layout: BundleLayout, label: String, _ apply: (Database) throws -> Void) throws {
        try scratchLock.withLock { _ in try verifyAlone(old: old, new: new, layout: layout, label: label, apply) }
    }

    /// `verify`, run by one thread at a time (they share the scratch copy's name).
    private static func verifyAlone(old: URL, new: URL, layout: BundleLayout, label: String, _ apply: (Database) throws -> Void) throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory())
        // `.kiln-patch.sqlite.<pid>.tmp`: a copy a killed `kiln patch` left goes at the next one's verification.
        let scratchFiles = BuildFiles(destination: folder.appendingPathComponent("kiln-patch.sqlite"))
        scratchFiles.removeStale()
        let scratch = KilnFileNames.temporary(for: scratchFiles.destination)
        let companions = KilnFileNames.sqliteCompanions.map { URL(fileURLWithPath: scratch.path + $0) }
        TemporaryFiles.shared.register(scratch)
        defer {
            for file in [scratch] + companions { try? FileManager.default.removeItem(at: file) }
            TemporaryFiles.shared.unregister(scratch)
        }
        try? FileManager.default.removeItem(at: scratch)
        do { try FileManager.default.copyItem(at: old, to: scratch) } catch {
            var failure = IOFailure.foundation("cannot copy \(old.relativePath) into \(folder.path) to check the patches", path: old.path, operation: .copy, error)
            failure.message += "; nothing was written"
            throw KilnError.io(failure)
        }
        // No room or memory for the copy is an I/O error: it says nothing of the patch.
        func noRoom(_ error: SQLiteError) -> KilnError {
            var failure = TemporaryFolder.storageFailure(error, writing: "a copy of \(old.relativePath) in \(folder.path) to check \(label)", in: folder)
            failure.message += "; nothing was written"
            return KilnError.io(failure)
        }
        let database = try BundleFile.openCopy(scratch, of: [old, new])
        defer { try? database.close() }
        do {
            try database.execute("PRAGMA foreign_keys = ON")
            try apply(database)
        } catch {
            if let stopped = BundleReadLimit.current.stopped(error, reading: [old, new]) { throw stopped }
            if let error = error as? SQLiteError, error.isStorageFailure || error.isOutOfMemory { throw noRoom(error) }
            throw KilnError.validation("no patch: \(label) does not apply to a copy of \(old.relativePath) (\((error as? SQLiteError)?.message ?? "\(error)")); nothing was written")
        }
        let differences: [String]
        do { differences = try PatchCheck.differences(database, schema: "main", from: new, layout: layout) } catch let error as SQLiteError where error.isStorageFailure || error.isOutOfMemory {
            throw noRoom(error)
        }
        if !differences.isEmpty {
            throw KilnError.validation("no patch: \(label) applied to a copy of \(old.relativePath) does not give \(new.relativePath): \(differences.joined(separator: "; ")); nothing was written")
        }
        try database.close()
    }

    /// One verification at a time in a process: its scratch copy has the process's name (`.kiln-patch.sqlite.<pid>.tmp`).
    private static let scratchLock = Mutex(())
}

/// How a patch file is applied.
package enum PatchKind: String {
    case sql, changeset

    /// Applies `bytes` to `database`, whose covered tables `layout` names: the SQL in one transaction (the patch's
    /// own, rolled back when a statement fails), the changeset in one go. The SQL may change the rows of the
    /// covered tables, of the full-text and R*Tree tables and of their shadow tables, and rebuild a full-text table
    /// (`SQLPatchWriter`), and nothing else: it cannot write another file (`VACUUM INTO`), change the schema or the
    /// user's tables (`patchScope`).
    /// - Throws: `SQLiteError` (code `SQLITE_AUTH` for what the patch may not do) or `SQLiteChangeset.Conflicts`;
    ///   nothing is changed then.
    package func apply(_ bytes: [UInt8], to database: Database, layout: BundleLayout) throws {
        switch self {
        case .sql:
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw KilnError.validation("the SQL patch is not UTF-8 text")
            }
            do {
                try database.changingRowsOnly(PatchKind.patchScope(layout)) { try database.execute(text) }
            } catch {
                try? database.execute("ROLLBACK")
                throw error
            }
        case .changeset:
            try SQLiteChangeset.apply(bytes, to: database)
        }
    }

    /// What an SQL patch may change in a bundle of `layout`: the rows of its covered tables (`kiln_metadata` among
    /// them), of its full-text and R*Tree tables and of their shadow tables; the full-text tables may be dropped and
    /// created again.
    package static func patchScope(_ layout: BundleLayout) -> RowWriteScope {
        let indexes = (layout.fullText + layout.spatial).map(\.name)
        return RowWriteScope(tables: Set(layout.tables.map(\.name) + indexes + layout.shadows), rebuildable: Set(layout.fullText.map(\.name)))
    }
}

extension UpdateManifest.PatchFile {
    /// The manifest's entry for patch `bytes` written as `file`: its size and SHA-256.
    package static func describe(_ file: String, _ kind: PatchKind, _ bytes: [UInt8]) -> Self {
        let digest = SHA256Digest()
        digest.update(bytes[...])
        return Self(file: file, kind: kind.rawValue, bytes: bytes.count, sha256: digest.hexDigest())
    }
}

/// The comparison of a patched bundle with the one it should now equal.
package enum PatchCheck {
    /// What differs between schema `schema` of `database` and the bundle at `expected`: schema, user_version, the
    /// rows of each covered table (`kiln_metadata` too), the rows of each FTS5 table (its columns, whatever their
    /// rowids) and R*Tree, and the indexes' own integrity checks. Empty when they are equal.
    package static func differences(_ database: Database, schema: String, from expected: URL, layout: BundleLayout) throws -> [String] {
        try database.execute("ATTACH DATABASE \(quoteLiteral(expected.path)) AS kiln_expected")
        defer { try? database.execute("DETACH DATABASE kiln_expected") }
        let userFilled = Set(try BundleLayout(database, schema: schema, userFilled: []).tables.map(\.name)).subtracting(layout.tables.map(\.name))
        let patched = try BundleLayout(database, schema: schema, userFilled: userFilled)
        var found: [String] = []
        if patched.schema != layout.schema { found.append("the schema differs") }
        if patched.userVersion != layout.userVersion { found.append("user_version is \(patched.userVersion), not \(layout.userVersion)") }
        func compare(_ name: String, _ columns: [String], _ order: [String]) throws {
            let left = try ContentDigest.table(name, columns: columns, order: order, in: database, schema: schema)
            let right = try ContentDigest.table(name, columns: columns, order: order, in: database, schema: "kiln_expected")
            if left != right { found.append("the rows of \(name) differ") }
        }
        for table in layout.tables { try compare(table.name, table.columns, table.order) }
        for fullText in layout.fullText {
            try compare(fullText.name, fullText.columns, fullText.columns)
            do {
                // FTS5's command takes a rank; FTS4's has none.
                let rank = BundleLayout.module(of: fullText.sql) == "fts5"
                try database.execute("INSERT INTO \(quoteIdentifier(schema)).\(quoteIdentifier(fullText.name)) (\(quoteIdentifier(fullText.name))\(rank ? ", rank" : "")) VALUES ('integrity-check'\(rank ? ", 1" : ""))")
            } catch let error as SQLiteError {
                found.append("the full-text index \(fullText.name) does not match its rows (\(error.message))")
            }
        }
        for spatial in layout.spatial {
            try compare(spatial.name, spatial.columns, [spatial.columns[0]])
            let check = try database.rows("SELECT rtreecheck(\(quoteLiteral(schema)), \(quoteLiteral(spatial.name)))").first?.values.first?.textValue
            if check != "ok" { found.append("the R*Tree \(spatial.name) is damaged (\(check ?? "no answer"))") }
        }
        return found
    }
}
