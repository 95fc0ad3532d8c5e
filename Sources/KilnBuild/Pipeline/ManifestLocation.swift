import Foundation
import KilnC
import KilnCore
import KilnManifest
import KilnReaders

/// Where a command finds its manifest — one rule for `check`, `diff`, `export` and `extract` (`build` and `test` take
/// the pipeline as their argument):
/// 1. `--manifest M`: the folder M holding `kiln.json5`, or the manifest file M;
/// 2. otherwise `kiln.json5` in the current folder, when there is one;
/// 3. otherwise, for a command given a bundle, `raw/<bundle>/kiln.json5`, where `<bundle>` is the name the bundle's
///    `kiln_metadata` records — checked to be a plain bundle name before it becomes part of a path.
public enum ManifestLocation {
    /// The manifest path by the rule above; `nil` when the rule finds none.
    /// - Throws: `KilnError.validation` when the bundle's recorded name is not a plain name (it would leave `raw/`),
    ///   and what `BundleFile.name(of:)` throws for a file that is not a bundle.
    public static func resolve(explicit: String?, bundle: URL?) throws -> String? {
        if let explicit { return explicit }
        if FileManager.default.fileExists(atPath: ManifestLoader.defaultFileName) { return "." }
        guard let bundle else { return nil }
        let name = try BundleFile.name(of: bundle)
        guard BundleName.isValid(name) else {
            throw KilnError.validation("\(bundle.relativePath) records the bundle name \"\(excerpt(name, limit: 60))\", which is not a plain "
                                           + "name (letters, digits, \"-\", \"_\", \".\"); give the manifest with --manifest")
        }
        let path = BundleFile.conventionalPipeline(named: name)
        return FileManager.default.fileExists(atPath: path + "/" + ManifestLoader.defaultFileName) ? path : nil
    }

    /// The manifest by the rule above, or a usage error saying where it was looked for.
    /// - Throws: `KilnError.usage` when the rule finds none; what `resolve` throws.
    public static func require(explicit: String?, bundle: URL) throws -> String {
        if let path = try resolve(explicit: explicit, bundle: bundle) { return path }
        let name = try BundleFile.name(of: bundle)
        throw KilnError.usage("\(bundle.relativePath) is a bundle of \"\(name)\", but there is no \(ManifestLoader.defaultFileName) here nor "
                                  + "\(BundleFile.conventionalPipeline(named: name))/\(ManifestLoader.defaultFileName); give its manifest with --manifest")
    }
}
