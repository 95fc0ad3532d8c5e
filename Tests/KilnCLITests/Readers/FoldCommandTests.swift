import Foundation
import XCTest
import KilnC
import KilnKit
import KilnTestSupport

/// `kiln build` with the `fold` and `nfc` normalizers (over ICU) on names in many scripts: the bundle's columns are
/// what Python's `unicodedata` gives (scripts/oracles/text_fold.py), and reference.py's `fold` where the two folds do
/// not differ by design.
final class FoldCommandTests: CLITestCase {
    private let names = [
        "Πανεπιστήμιο", "ΠΑΝΕΠΙΣΤΗΜΙΟ  Πατρών", "Προϊστάμενος", "Αγίου Σπυρίδωνος", "Ἀθῆναι ᾯ", "Πα\u{0301}τρα",
        "Příliš žluťoučký kůň", "ČESKÝ KRUMLOV", "Ångström", "A\u{030A}ngstro\u{0308}m", "Weißenburg in Bayern",
        "ﬁnance", "Ёлка Йошкар-Ола", "東京都", "한국어", "\u{1112}\u{1161}\u{11AB}", "ズ パ", "👍🏽 Café", "क़",
        "\u{212B} \u{2126}", "  Άνω \u{00A0} Καστρίτσι ", "plain ascii", "MiXeD ASCII",
    ]

    func testFoldAndNFCColumnsAsPython() throws {
        try TestTier.requireFull("the Python oracles")
        let folder = workingDirectory.appendingPathComponent("fold")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let records = names.enumerated().map { "  <stop code=\"\($0.offset)\"><name>\($0.element)</name></stop>" }
        try ("<stops>\n" + records.joined(separator: "\n") + "\n</stops>\n").write(to: folder.appendingPathComponent("stops.xml"), atomically: true, encoding: .utf8)
        try """
        {
          bundle: "fold", schemaVersion: 1,
          tables: [{ name: "stop", primaryKey: ["code"], columns: [
            { name: "code", type: "integer" }, { name: "raw", type: "text" }, { name: "name", type: "text" },
            { name: "search", type: "text" } ] }],
          sources: [{ name: "stops", format: "xml", path: "stops.xml", options: { record: "stop", fields: { code: "@code", name: "name" } },
                      into: "stop", columns: { code: "code", raw: "name", name: { field: "name", normalize: ["nfc", "collapseSpaces"] },
                                               search: { field: "name", normalize: ["fold"] } } }],
        }
        """.write(to: folder.appendingPathComponent("kiln.json5"), atomically: true, encoding: .utf8)

        let run = try kiln("build", "fold", "--out", "fold.sqlite", "--quiet")
        XCTAssertEqual(run.status, 0, run.stderr)
        let database = try Database(path: file("fold.sqlite").path, mode: .readOnly)
        let rows = try database.rows("SELECT raw, name, search FROM stop ORDER BY code")
        XCTAssertEqual(rows.count, names.count)
        let texts: [[String]] = rows.map { row in row.values.map { if case .text(let text) = $0 { text } else { "" } } }
        let raws = texts.map { $0[0] }
        let input = String(decoding: try JSONSerialization.data(withJSONObject: raws), as: UTF8.self)
        let answers = try XCTUnwrap(try JSONSerialization.jsonObject(with: try PythonOracle.run("text_fold.py", [], input: input)) as? [[Any]])
        var divergent = 0
        for (row, answer) in zip(texts, answers) {
            let reference = try XCTUnwrap(answer[0] as? String), rule = try XCTUnwrap(answer[1] as? String)
            let nfc = try XCTUnwrap(answer[2] as? String)
            XCTAssertEqual(Array(row[1].utf8), Array(nfc.split(whereSeparator: \.isWhitespace).joined(separator: " ").utf8), "name of \(row[0])")
            XCTAssertEqual(Array(row[2].utf8), Array(rule.utf8), "search of \(row[0])")
            if try XCTUnwrap(answer[4] as? Bool) {
                divergent += 1
            } else {
                XCTAssertEqual(Array(row[2].utf8), Array(reference.utf8), "search of \(row[0]) against reference.py")
            }
        }
        XCTAssertEqual(divergent, 4) // Weißenburg, ﬁnance, ズ パ, क़
    }
}
