import Foundation
import XCTest

/// Steps the build-cache tests share (`BuildCacheCommandTests`, `SourceCacheCommandTests`).
extension CLITestCase {
    /// Runs `kiln build pipeline --out output extra…`, which must succeed.
    func build(_ pipeline: String, _ output: String, _ extra: String...) throws -> Run {
        let run = try kiln(["build", pipeline, "--out", output] + extra)
        XCTAssertEqual(run.status, 0, run.stderr)
        return run
    }

    /// Replaces `old`, which must be there, with `new` in the file at `path` (in place, the file not renamed).
    func replace(_ old: String, with new: String, in path: String) throws {
        let text = try String(contentsOf: file(path), encoding: .utf8)
        XCTAssertTrue(text.contains(old), "\(path) holds \(old)")
        try text.replacingOccurrences(of: old, with: new).write(to: file(path), atomically: false, encoding: .utf8)
    }
}
