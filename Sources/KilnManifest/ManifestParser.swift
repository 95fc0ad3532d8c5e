import Foundation
import KilnC
import KilnCore

/// Reads a manifest file's bytes into a checked `Manifest`: its encoding, its JSON5 syntax, keys written twice,
/// strict decoding (no unknown key, no wrong type) and `ManifestChecker`'s checks of every name. Each mistake is a
/// `KilnError.manifest` with the file, the line and the key path.
package enum ManifestParser {
    /// The manifest `data` holds, read from `file`, and where its keys are (for later messages).
    /// - Throws: `KilnError.manifest` for any mistake in it.
    package static func parse(_ data: Data, file: URL) throws -> (manifest: Manifest, locator: JSON5Locator) {
        if let issue = ManifestEncoding.issue([UInt8](data), file: file.path) { throw issue }
        let text = String(decoding: data, as: UTF8.self)
        let locator = JSON5Locator(text: text)
        let displayName = file.path
        func issue(_ keyPath: String, _ message: String) -> KilnError {
            .manifest(ManifestIssue(file: displayName, line: locator.line(of: keyPath), keyPath: keyPath, message: message))
        }

        if locator.syntaxError == nil, let duplicate = locator.duplicateKey {
            throw KilnError.manifest(ManifestIssue(file: displayName, line: duplicate.line, keyPath: duplicate.keyPath,
                                                   message: "this key is written twice in one object (first on line \(duplicate.firstLine)); "
                                                       + "only one of the two values would be read: remove one"))
        }
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        let document: ManifestDocument
        do {
            document = try decoder.decode(ManifestDocument.self, from: data)
        } catch let error as DecodingError {
            throw translate(error, file: displayName, locator: locator)
        }
        var manifest = Manifest(bundle: document.bundle, schemaVersion: document.schemaVersion, tables: document.tables,
                                sources: document.sources, rules: document.rules, severity: document.severity,
                                exports: document.exports, vocabularies: document.vocabularies, fixtures: document.fixtures, thresholds: document.thresholds, baseline: document.baseline, limits: document.limits, patch: document.patch, description: document.description, targets: document.targets, file: file)
        manifest.exportsFrom = document.exportsFrom
        manifest.acknowledged = document.acknowledged
        manifest.fetch = document.fetch ?? FetchSettings()
        manifest.sha256 = SHA256Digest.hex(of: data)
        try ManifestChecker(manifest: manifest, issue: issue).check()
        return (manifest, locator)
    }

    /// A decoding error as a manifest mistake at its key path and line.
    package static func translate(_ error: DecodingError, file: String, locator: JSON5Locator) -> KilnError {
        let context: DecodingError.Context
        var message: String
        switch error {
        case .typeMismatch(let type, let c):
            context = c
            message = "wrong type: expected \(describe(type))"
        case .valueNotFound(let type, let c):
            context = c
            message = "missing value: expected \(describe(type))"
        case .keyNotFound(let key, let c):
            context = DecodingError.Context(codingPath: c.codingPath + [key], debugDescription: c.debugDescription)
            message = "missing required key \"\(key.stringValue)\""
        case .dataCorrupted(let c):
            context = c
            message = acceptedValuesMessage(c.debugDescription) ?? c.debugDescription
            if let underlying = c.underlyingError {
                message = "not valid JSON5: \((underlying as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(underlying)")"
            }
        @unknown default:
            return .manifest(ManifestIssue(file: file, line: nil, keyPath: "", message: "\(error)"))
        }
        let keyPath = keyPathString(context.codingPath)
        var line = locator.line(of: keyPath)
        if context.codingPath.isEmpty, let syntax = locator.syntaxError {
            line = syntax.line
            message = "not valid JSON5: " + syntax.message
        }
        return .manifest(ManifestIssue(file: file, line: line, keyPath: keyPath, message: message))
    }

    /// The words a manifest may use for each kind of named value.
    private static let acceptedValues: [String: [String]] = [
        "ColumnType": ColumnType.allCases.map(\.rawValue),
        "Severity": Severity.allCases.map(\.rawValue),
        "RuleKind": RuleKind.allCases.map(\.rawValue),
    ]

    /// Foundation's "Cannot initialize ColumnType from invalid String value float" as a sentence naming the accepted
    /// values; `nil` for any other message.
    private static func acceptedValuesMessage(_ text: String) -> String? {
        let prefix = "Cannot initialize "
        guard text.hasPrefix(prefix), let from = text.range(of: " from invalid "), let value = text.range(of: " value ") else { return nil }
        let typeName = String(text[text.index(text.startIndex, offsetBy: prefix.count)..<from.lowerBound])
        guard let accepted = acceptedValues[typeName] else { return nil }
        let found = String(text[value.upperBound...])
        return "\"\(found)\" is not accepted here; expected one of: \(accepted.joined(separator: ", "))"
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is [Any].Type: return "an array"
        default:
            let name = "\(type)"
            if name.hasPrefix("Array") { return "an array" }
            if name.hasPrefix("Dictionary") { return "an object" }
            return name.hasSuffix("Spec") || name.hasSuffix("Document") || name.hasSuffix("Mapping") ? "an object" : name
        }
    }
}
