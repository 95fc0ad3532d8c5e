import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Turns records into staging rows: each mapped column's value shaped (normalized, converted to its type), then
/// the provenance columns. Not `Sendable`: normalizers hold PCRE2 and ICU objects; it is used by one thread at a time.
package final class RowShaper {
    package let targets: [CompiledTarget]
    /// What each target's mappings need, read once instead of for every value (fewer copies and reference counts).
    private let plans: [[MappingPlan]]

    /// One mapping, as shaping a value uses it.
    private struct MappingPlan {
        package let mapping: CompiledMapping
        package let type: ColumnType
        /// This shaper's own normalizers of the mapping's steps.
        package let normalizers: [Normalizer]
        /// True when the mapping's normalizers are exactly the default `trim`, which never fails.
        package let trimOnly: Bool
    }

    /// A shaper for `targets`, with normalizers of its own compiled from their checked steps.
    /// - Throws: as `Normalizer.init(_:)`, never for the targets of a loaded pipeline.
    package init(targets: [CompiledTarget]) throws {
        self.targets = targets
        plans = try targets.map { target in
            try target.mappings.map { mapping in
                let trimOnly: Bool
                if mapping.steps.count == 1, case .plain(.trim) = mapping.steps[0] { trimOnly = true } else { trimOnly = false }
                return MappingPlan(mapping: mapping, type: mapping.column.type, normalizers: try mapping.steps.map(Normalizer.init), trimOnly: trimOnly)
            }
        }
    }

    /// The values of `record`'s row in the table of `targets[target]`, in insert order; problems go to `log`.
    package func row(_ record: Record, target index: Int, input: InputFile, log: DiagnosticLog) -> [SQLValue] {
        let plans = self.plans[index]
        var values: [SQLValue] = []
        values.reserveCapacity(plans.count + 2)
        for plan in plans { values.append(shape(record, plan, target: index, input: input, log: log)) }
        values.append(.text(input.relativePath))
        values.append(.integer(Int64(record.line)))
        return values
    }

    /// The value of one column for one record: the field or constant, normalized, converted to the declared type.
    /// A value that cannot be shaped is reported and staged as its raw text, so that nothing is lost and no
    /// second finding (such as not-null) repeats the first.
    private func shape(_ record: Record, _ plan: MappingPlan, target: Int, input: InputFile, log: DiagnosticLog) -> SQLValue {
        let mapping = plan.mapping
        let raw = mapping.constant ?? (mapping.fileProperty.map { $0.value(of: input) }
                                       ?? mapping.fieldIndex.flatMap { $0 < record.values.count ? record.values[$0] : nil })
        // Every normalizer leaves a missing value missing.
        guard let raw else { return .null }
        if mapping.constant == nil, mapping.fileProperty == nil, let index = mapping.fieldIndex, let bytes = record.binaryValues?[index] {
            return binary(bytes, text: raw, plan, target: target, line: record.line, input: input, log: log)
        }
        guard plan.trimOnly else { return shapeNormalized(raw, record, plan, target: target, input: input, log: log) }
        return converted(raw, from: TextFolding.trim(raw), plan, target: target, line: record.line, input: input, log: log)
    }

    /// `shape` for mappings with normalizers other than the default `trim` alone.
    private func shapeNormalized(_ raw: String, _ record: Record, _ plan: MappingPlan, target: Int, input: InputFile,
                                 log: DiagnosticLog) -> SQLValue {
        let mapping = plan.mapping
        var text: String? = raw
        do {
            for normalizer in plan.normalizers { text = try normalizer.apply(text, record: record) }
        } catch {
            let problem = error as? ValueProblem ?? ValueProblem(message: "\(error)")
            log.report(problem.code, "\(targets[target].table.name).\(mapping.column.name): \(problem.message)",
                       at: input.at(record.line))
            return .text(raw)
        }
        guard let text else { return .null }
        return converted(raw, from: text, plan, target: target, line: record.line, input: input, log: log)
    }

    /// A binary value (a BLOB) for one column: its bytes as they are for a `blob` column (no normalizer applies to
    /// bytes); for any other type, reported and staged as its hexadecimal `text`, so that the bytes are not taken
    /// for text silently.
    private func binary(_ bytes: [UInt8], text: String, _ plan: MappingPlan, target: Int, line: Int, input: InputFile,
                        log: DiagnosticLog) -> SQLValue {
        if plan.type == .blob { return .blob(bytes) }
        log.report(.valueBlob, "\(targets[target].table.name).\(plan.mapping.column.name): the source gives a BLOB of "
                       + "\(bytes.count) byte\(bytes.count == 1 ? "" : "s") (x'\(excerpt(text, limit: 24))'), which a \(plan.type.rawValue) column "
                       + "cannot hold; declare the column blob (staged as its hexadecimal text)", at: input.at(line))
        return .text(text)
    }

    /// `text` (the normalized `raw`) converted to the column's type; on failure, reported and staged as `raw`.
    private func converted(_ raw: String, from text: String, _ plan: MappingPlan, target: Int, line: Int, input: InputFile,
                           log: DiagnosticLog) -> SQLValue {
        switch ValueConversion.convert(text, to: plan.type) {
        case .success(let value): return value
        case .failure(let problem):
            let shown = raw == text ? "" : " (written \"\(excerpt(raw))\")"
            log.report(.value, "\(targets[target].table.name).\(plan.mapping.column.name): \(problem.message)\(shown)",
                       at: input.at(line))
            return .text(raw)
        }
    }
}

/// Where the single-threaded `StagingArea.load` puts records: shaped and inserted on the calling thread.
package final class StagingSink {
    package let database: Database
    package let inserts: [Statement]
    package let shaper: RowShaper
    package let log: DiagnosticLog
    /// Takes in each row inserted.
    package private(set) var recorder: StagedRowRecorder
    /// The recorder as it was when the transaction began, for a rollback.
    private var recorderAtBegin: StagedRowRecorder

    package init(_ database: Database, _ inserts: [Statement], _ shaper: RowShaper, _ log: DiagnosticLog, _ recorder: StagedRowRecorder) {
        self.database = database
        self.inserts = inserts
        self.shaper = shaper
        self.log = log
        self.recorder = recorder
        recorderAtBegin = recorder
    }

    package func begin() throws {
        try database.execute("BEGIN")
        recorderAtBegin = recorder
    }

    package func add(_ record: Record, target: Int, input: InputFile) throws {
        let values = shaper.row(record, target: target, input: input, log: log)
        try inserts[target].run(values)
        BuildMeter.shared.staged(1)
        recorder.record(values, target: target)
    }

    package func commit() throws { try database.execute("COMMIT") }

    /// Drops the current source's rows.
    package func rollback() {
        try? database.execute("ROLLBACK")
        recorder = recorderAtBegin
    }
}
