import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore

/// `CannotRead`: one sentence for a file that cannot be read, with the reason in the file system's words.
final class CannotReadTests: KilnTestCase {
    func testTheReasonIsTheFileSystemsOrTheSystemsWords() throws {
        let missing = temporaryDirectory.appendingPathComponent("missing.sqlite")
        XCTAssertEqual(CannotRead.reason(missing, nil), "there is no such file")
        XCTAssertEqual(CannotRead.reason(temporaryDirectory, nil), "it is a folder, not a file")
        let file = try write("x", to: "present.txt")
        let posix = NSError(domain: NSCocoaErrorDomain, code: 256, userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(EIO))])
        XCTAssertEqual(CannotRead.reason(file, posix), SystemError.message(EIO).prefix(1).lowercased() + SystemError.message(EIO).dropFirst())
        XCTAssertFalse(CannotRead.message(missing, CocoaError(.fileReadNoSuchFile)).contains("could not be completed"))
        if case .io(let failure) = CannotRead.error(missing, named: "raw/p/missing.sqlite") {
            XCTAssertEqual(failure.message, "cannot read raw/p/missing.sqlite: there is no such file")
        } else {
            XCTFail("an I/O error")
        }
    }
}
