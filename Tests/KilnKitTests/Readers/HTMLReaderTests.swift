import Foundation
import XCTest
@testable import KilnC
@testable import KilnCore
@testable import KilnManifest
@testable import KilnReaders
@testable import KilnBuild

/// `HTMLReader` in fields mode (CSS and XPath selectors, page fields) and extract mode (rendered text cut up by
/// headings and rows), with the mess real pages have.
final class HTMLReaderTests: KilnTestCase {
    private func reader(_ options: [String: JSONValue]) throws -> HTMLReader {
        try HTMLReader(options: JSONValue.object(options).decode(HTMLReader.Options.self, codingPath: []))
    }

    private func css(_ selector: String) -> JSONValue { .object(["css": .string(selector)]) }

    /// Each record as `name=value` pairs in field order (`∅` for nil).
    private func rows(_ reader: HTMLReader, _ records: [Record]) -> [String] {
        records.map { record in zip(reader.fieldNames, record.declaredValues).map { "\($0)=\($1 ?? "∅")" }.joined(separator: " ") }
    }

    private func describe(_ log: DiagnosticLog) -> String { log.diagnostics.map(\.formatted).joined(separator: "\n") }

    // MARK: Fields mode

    private let stopsPage = """
        <html><head><title>Στάσεις</title></head><body>
        <p class="updated">Ενημέρωση:  12/03/2014 </p>
        <table class="stops">
        <tr class="head"><th>Κωδικός</th><th>Όνομα</th></tr>
        <tr class="stop" data-code="0102"><td class="code">0102</td><td class="name">Ακτή Δυμαίων</td><td><a href="/s/0102">χάρτης</a></td></tr>
        <tr class="stop odd" data-code="0104"><td class="code">0104</td><td class="name">Άγιος Ανδρέας</td></tr>
        <tr class="stopped"><td class="code">9999</td><td class="name">not a stop row</td></tr>
        </table>
        </body></html>
        """

    func testFieldsModeWithCSS() throws {
        let html = try reader([
            "records": css("tr.stop"),
            "fields": .object(["code": css("td.code"), "name": css("td.name"), "map": css("a"), "data": .string("@data-code")]),
        ])
        XCTAssertEqual(html.fieldNames, ["code", "data", "map", "name", "_ordinal", "_position"])
        let (records, log) = try read(html, stopsPage, name: "stops.html")
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        // `tr.stop` matches the class word "stop" (also in "stop odd"), not "stopped".
        XCTAssertEqual(rows(html, records), ["code=0102 data=0102 map=χάρτης name=Ακτή Δυμαίων",
                                             "code=0104 data=0104 map=∅ name=Άγιος Ανδρέας"])
        XCTAssertEqual(records.map(\.line), [5, 6])
    }

    func testCSSFieldsAreRelativeToTheRecord() throws {
        // `td.code` is `.//td[…]` from each row, so each record gets its own cell, not the page's first.
        let html = try reader(["records": css("tr.stop"), "fields": .object(["code": css("td.code")])])
        let (records, _) = try read(html, stopsPage, name: "stops.html")
        XCTAssertEqual(records.map(\.declaredValues), [["0102"], ["0104"]])
    }

    func testFieldsModeWithXPath() throws {
        let html = try reader([
            "records": .object(["xpath": .string("//table[@class='stops']/tr[td]")]),
            "fields": .object(["code": .string("td[1]"), "name": .string("td[2]"), "link": .string("td[3]/a/@href"),
                               "cells": .string("count(td)")]),
        ])
        let (records, log) = try read(html, stopsPage, name: "stops.html")
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(rows(html, records), ["cells=3 code=0102 link=/s/0102 name=Ακτή Δυμαίων",
                                             "cells=2 code=0104 link=∅ name=Άγιος Ανδρέας",
                                             "cells=2 code=9999 link=∅ name=not a stop row"])
        XCTAssertEqual(records.map(\.line), [5, 6, 7])
    }

    func testPageFieldsComeFirstAndAreCollapsed() throws {
        let html = try reader([
            "records": css("tr.stop"),
            "fields": .object(["code": css("td.code")]),
            "pageFields": .object(["updated": .string("//p[@class='updated']"), "title": .string("//title"),
                                   "missing": css("h6")]),
        ])
        XCTAssertEqual(html.fieldNames, ["missing", "title", "updated", "code", "_ordinal", "_position"])
        let (records, _) = try read(html, stopsPage, name: "stops.html")
        XCTAssertEqual(rows(html, records), ["missing=∅ title=Στάσεις updated=Ενημέρωση: 12/03/2014 code=0102",
                                             "missing=∅ title=Στάσεις updated=Ενημέρωση: 12/03/2014 code=0104"])
    }

    func testRecordsOrExtractIsRequired() throws {
        XCTAssertThrowsError(try reader(["fields": .object(["a": .string("td")])])) { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("got \(error)") }
            XCTAssertEqual(context.debugDescription, "give one of \"records\" (with \"fields\"), \"kinds\" or \"extract\"")
        }
        XCTAssertThrowsError(try reader(["records": css("tr"), "extract": .object(["row": .string("(?<a>x)")])]))
    }

    func testUnsupportedCSSIsAValueProblem() throws {
        XCTAssertThrowsError(try reader(["records": css("tr:first-child"), "fields": .object(["a": .string("td")])])) { error in
            XCTAssertTrue(error is ValueProblem, "got \(error)")
        }
    }

    // MARK: Extract mode

    private func extractReader(extra: [String: JSONValue] = [:], expect: JSONValue? = nil) throws -> HTMLReader {
        var options: [String: JSONValue] = [
            "extract": .object([
                "headings": .array([.string(#"^Γραμμή\s+(?<line>[0-9.]+):\s*(?<name>.+)$"#),
                                    .string(#"^(?<days>Καθημερινές|Σάββατο|Κυριακή)$"#)]),
                "row": .string(#"^(?<from>\d{1,2}:\d{2})\t(?<until>\d{1,2}:\d{2})\t(?<every>\d{1,3})$"#),
                "skip": .array([.string(#"^Από\tΈως\tΣυχνότητα$"#)]),
            ]),
        ]
        options.merge(extra) { _, new in new }
        if let expect { options["expect"] = expect }
        return try reader(options)
    }

    private let timetablePage = """
        <!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">
        <html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">
        <title>Γραμμή 6.10</title>
        <style>td { font: 11px Verdana } .x:before { content: "06:00 08:00 20" }</style>
        <script>var lastUpdate = "06:00 08:00 20";</script>
        </head><body>
        <script type="text/javascript">document.write("06:00\t08:00\t20"); // 07:00</script>
        <style>.y { width: 10:30 }</style>
        <h1>Γραμμή 1.1: Τερψιθέα&nbsp;-&nbsp;Εγλυκάδα</h1>
        <!-- ωράριο 09:00 -->
        <table>
        <tr><th colspan="3">Καθημερινές</th></tr>
        <tr><th>Από</th><th>Έως</th><th>Συχνότητα</th></tr>
        <tr><td>06:20</td><td>&nbsp;07:00</td><td>20&nbsp;</td></tr>
        <tr><td>07:00<td>21:00<td>10
        <tr><td>21:00<!-- τελευταίο --></td><td>
            22:40
          </td><td>15</td></tr>
        <tr><th colspan="3">Σάββατο</th></tr>
        <tr><td>08:00</td><td>14:00</td><td>30</td></tr>
        </table>
        <h1>Γραμμή 2.1: Ταραμπούρα</h1>
        <table><tr><td>09:00</td><td>10:00</td><td>60</td></tr></table>
        <p>Τελευταίο<br>δρομολόγιο στις 23:15</p>
        </body></html>
        """

    func testExtractModeCarriesHeadings() throws {
        let html = try extractReader()
        XCTAssertEqual(html.fieldNames, ["line", "name", "days", "from", "until", "every"])
        let (records, log) = try read(html, timetablePage, name: "line.html")
        XCTAssertEqual(rows(html, records), [
            "line=1.1 name=Τερψιθέα - Εγλυκάδα days=Καθημερινές from=06:20 until=07:00 every=20",
            "line=1.1 name=Τερψιθέα - Εγλυκάδα days=Καθημερινές from=07:00 until=21:00 every=10",
            "line=1.1 name=Τερψιθέα - Εγλυκάδα days=Καθημερινές from=21:00 until=22:40 every=15",
            "line=1.1 name=Τερψιθέα - Εγλυκάδα days=Σάββατο from=08:00 until=14:00 every=30",
            // The second line heading clears the day heading.
            "line=2.1 name=Ταραμπούρα days=∅ from=09:00 until=10:00 every=60",
        ])
        XCTAssertEqual(records.map(\.line), [14, 15, 16, 20, 23])
        // The only unmatched line is the note: the <br> split it, and its second half holds the time. Nothing from
        // the script, the style or the comment.
        XCTAssertEqual(log.diagnostics.map(\.code), ["extract.unmatched"], describe(log))
        let finding = try XCTUnwrap(log.diagnostics.first)
        XCTAssertEqual(finding.severity, .warning)
        XCTAssertEqual(finding.provenance, Provenance(file: "line.html", line: 24))
        XCTAssertEqual(finding.message, "no row pattern captured this line that looks like data: \"δρομολόγιο στις 23:15\"")
        XCTAssertFalse(records.contains { $0.declaredValues.contains("08:00") && $0.declaredValues.contains("06:00") })
    }

    func testCellSeparatorOption() throws {
        let html = try extractReader(extra: [
            "text": .object(["cellSeparator": .string(" | ")]),
            "extract": .object(["row": .string(#"^(?<from>\d{1,2}:\d{2}) \| (?<until>\d{1,2}:\d{2}) \| (?<every>\d+)$"#)]),
        ])
        let (records, log) = try read(html, "<table><tr><td>06:20</td><td>07:00</td><td>20</td></tr></table>", name: "sep.html")
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(rows(html, records), ["from=06:20 until=07:00 every=20"])
    }

    func testTextRootSelectsPartOfThePage() throws {
        let page = """
            <html><body><table class="layout"><tr>
            <td class="menu">Ωράριο 05:00<br>Αρχική</td>
            <td class="content"><table><tr><td>06:20</td><td>07:00</td><td>20</td></tr></table></td>
            </tr></table>
            <div class="footer">Ενημέρωση 12:00</div>
            </body></html>
            """
        let html = try extractReader(extra: ["text": .object(["root": css("td.content")])])
        let (records, log) = try read(html, page, name: "root.html")
        XCTAssertEqual(rows(html, records), ["line=∅ name=∅ days=∅ from=06:20 until=07:00 every=20"])
        XCTAssertEqual(records.map(\.line), [3])
        // The menu and the footer, outside the root, are not looked at.
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))

        // The whole body, by default: both are unmatched candidate lines.
        let (_, bodyLog) = try read(try extractReader(), page, name: "body.html")
        XCTAssertEqual(bodyLog.diagnostics.map { $0.provenance?.line }, [2, 5], describe(bodyLog))
    }

    func testPageFieldsInExtractMode() throws {
        let html = try extractReader(extra: ["pageFields": .object(["title": .string("//title")])])
        XCTAssertEqual(html.fieldNames, ["title", "line", "name", "days", "from", "until", "every"])
        let (records, _) = try read(html, timetablePage, name: "line.html")
        XCTAssertEqual(records.count, 5)
        XCTAssertTrue(records.allSatisfy { $0.declaredValues[0] == "Γραμμή 6.10" })
    }

    func testWindows1253PageWithMetaCharset() throws {
        let page = """
            <html><head><meta charset=windows-1253><title>Ωράριο</title></head><body>
            <h1>Γραμμή 2.1: Ταραμπούρα - Νέος Δρόμος</h1>
            <table><tr><th colspan="3">Καθημερινές</th></tr>
            <tr><td>06:00</td><td>07:00</td><td>20</td></tr></table>
            </body></html>
            """
        let data = try XCTUnwrap(page.data(using: .windowsCP1253))
        XCTAssertNil(String(data: data, encoding: .utf8))
        let url = try write(data, to: "cp1253.html")
        let html = try extractReader()
        let (records, log) = try read(html, url: url)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
        XCTAssertEqual(rows(html, records), ["line=2.1 name=Ταραμπούρα - Νέος Δρόμος days=Καθημερινές from=06:00 until=07:00 every=20"])
    }

    func testWindows1253PageWithHTTPEquivMeta() throws {
        let page = """
            <html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1253"></head><body>
            <h1>Γραμμή 3.2: Ζαρουχλέικα - Λεύκα</h1>
            <table><tr><td>06:00</td><td>07:00</td><td>20</td></tr></table>
            </body></html>
            """
        let url = try write(try XCTUnwrap(page.data(using: .windowsCP1253)), to: "cp1253.html")
        let html = try extractReader()
        let (records, _) = try read(html, url: url)
        XCTAssertEqual(records.first?.values[1], "Ζαρουχλέικα - Λεύκα")
    }

    func testEncodingOptionOverridesThePage() throws {
        // The page says UTF-8 but is windows-1253.
        let page = "<html><head><meta charset=\"utf-8\"></head><body><h1>Γραμμή 5.1: Τσουκαλέικα</h1><table><tr><td>06:00</td><td>07:00</td><td>20</td></tr></table></body></html>"
        let url = try write(try XCTUnwrap(page.data(using: .windowsCP1253)), to: "lying.html")
        let html = try extractReader(extra: ["encoding": .string("windows-1253")])
        let (records, _) = try read(html, url: url)
        XCTAssertEqual(records.first?.values[1], "Τσουκαλέικα")
    }

    func testExpectationsArePerPage() throws {
        let html = try extractReader(expect: .object(["minRows": .number(6)]))
        let (_, log) = try read(html, timetablePage, name: "line.html")
        let expectation = log.diagnostics.filter { $0.code == "extract.expectation" }
        XCTAssertEqual(expectation.map(\.message), ["the page gave 5 rows; expected at least 6"])
        XCTAssertEqual(expectation.first?.provenance, Provenance(file: "line.html"))
        XCTAssertEqual(expectation.first?.severity, .error)
    }

    func testPageWithoutText() throws {
        let (records, log) = try read(try extractReader(), "<html><body><!-- nothing --></body></html>", name: "blank.html")
        XCTAssertEqual(records.count, 0)
        XCTAssertEqual(log.diagnostics.count, 0, describe(log))
    }

    func testEmptyFileIsADiagnosticAndReadingGoesOn() throws {
        let (records, log) = try read(try extractReader(), "", name: "empty.html")
        XCTAssertEqual(records.count, 0)
        XCTAssertEqual(log.diagnostics.map(\.code), ["html.unreadable"], describe(log))
        XCTAssertEqual(log.diagnostics.first?.severity, .error)
        XCTAssertTrue(log.diagnostics.first?.message.hasSuffix("empty.html holds no HTML that can be parsed (is it empty?); the page gives no records") == true,
                      describe(log))
    }

    func testAPageTheDigestReadWholeIsParsedFromThoseBytes() throws {
        // The digest pass kept the whole page (`InputFile.head`); the file on disk has changed since. The reader
        // parses the bytes the digest is of, and does not open the file again.
        let url = try write("<html><body><p>nothing here</p></body></html>", to: "changed.html")
        let kept = Array(timetablePage.utf8)
        var records: [Record] = []
        try extractReader().read(InputFile(url: url, relativePath: "changed.html", head: kept), log: DiagnosticLog()) { records.append($0) }
        let (fromDisk, _) = try read(try extractReader(), timetablePage, name: "timetable.html")
        XCTAssertFalse(fromDisk.isEmpty)
        XCTAssertEqual(records.map(\.values), fromDisk.map(\.values))
        // Kept bytes over the page limit are refused as the file would be.
        let log = DiagnosticLog()
        records = []
        try extractReader(extra: ["maxPageBytes": .number(100)]).read(InputFile(url: url, relativePath: "changed.html", head: kept), log: log) {
            records.append($0)
        }
        XCTAssertEqual(records.count, 0)
        XCTAssertEqual(log.diagnostics.map(\.code), [DiagnosticCode.htmlTooLarge.rawValue], describe(log))
        // A head as long as `headLength` may be only the start of the file: the file is read.
        let start = Array(repeating: UInt8(ascii: " "), count: InputFile.headLength)
        XCTAssertNil(InputFile(url: url, relativePath: "changed.html", head: start).wholeFile)
        XCTAssertEqual(InputFile(url: url, relativePath: "changed.html", head: kept).wholeFile, kept)
    }

    func testMissingPageIsAnIOError() throws {
        let missing = temporaryDirectory.appendingPathComponent("missing.html")
        XCTAssertThrowsError(try extractReader().read(InputFile(url: missing, relativePath: "missing.html"), log: DiagnosticLog()) { _ in }) { error in
            guard case KilnError.io(let failure) = error else { return XCTFail("got \(error)") }
            XCTAssertTrue(failure.message.contains("missing.html"), failure.message)
        }
    }
}

/// The `html` reader's `kinds`: several kinds of record from one page in one pass, and what a page that gives
/// nothing (or a field that matches nothing) reports.
final class HTMLReaderKindsTests: KilnTestCase {
    private func reader(_ options: String) throws -> HTMLReader {
        let data = Data(options.utf8)
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        return try HTMLReader(options: decoder.decode(HTMLReader.Options.self, from: data))
    }

    private let page = """
        <html><body><article><h1>Hřib smrkový</h1><p class="latin"><i>Boletus edulis</i></p>
        <ul class="syn"><li lang="la">Boletus bulbosus</li><li lang="cs">Hřib jedlý</li></ul></article></body></html>
        """

    func testOnePageGivesEveryKindWithThePageFields() throws {
        let html = try reader("""
            { pageFields: { latin: "//p[@class='latin']/i" },
              kinds: { species: { records: "//article", fields: { name: ".//h1" } },
                       synonym: { records: "//ul[@class='syn']/li", fields: { synonym: ".", language: "@lang" } } } }
            """)
        XCTAssertEqual(html.kinds.map(\.name), ["species", "synonym"])
        XCTAssertEqual(html.kinds[1].fieldNames, ["latin", "language", "synonym", "_ordinal", "_position"])
        let (records, log) = try read(html, page, name: "p.html")
        XCTAssertEqual(log.diagnostics.map(\.formatted), [])
        XCTAssertEqual(records.map { "\($0.kind.name): \($0["latin"]!) \($0.kind.name == "species" ? $0["name"]! : $0["synonym"]!)" },
                       ["species: Boletus edulis Hřib smrkový", "synonym: Boletus edulis Boletus bulbosus", "synonym: Boletus edulis Hřib jedlý"])
        XCTAssertEqual(records.filter { $0.kind.name == "synonym" }.map { $0["_position"] }, ["1", "2"])
        // Restricted to one kind, the other is not read.
        let only = try read(html.restricted(to: ["synonym"]), page, name: "p.html").records
        XCTAssertEqual(only.map(\.kind.name), ["synonym", "synonym"])
    }

    func testAPageThatGivesNothingAndAFieldThatMatchesNothingAreReported() throws {
        let html = try reader(#"{ records: "//table[@id='stops']//tr", fields: { code: "td[1]", name: "td[@class='gone']" } }"#)
        let (none, emptyLog) = try read(html, "<html><body><p>Redesigned.</p></body></html>", name: "new.html")
        XCTAssertEqual(none.count, 0)
        XCTAssertEqual(emptyLog.diagnostics.map(\.formatted),
                       [#"new.html: warning: the page gives no record: "//table[@id='stops']//tr" matches nothing here [source.empty]"#])
        let (rows, log) = try read(html, "<html><body><table id=\"stops\">\n<tr><td>0102</td></tr>\n<tr><td>0104</td></tr></table></body></html>", name: "old.html")
        XCTAssertEqual(rows.count, 2)
        XCTAssertEqual(log.diagnostics.map(\.formatted),
                       [#"old.html:2: info: the field "name" matches nothing in any of the page's 2 records [source.field-unmatched]"#])
    }

    func testATypoInAnXPathFunctionIsRefused() {
        XCTAssertThrowsError(try reader(#"{ records: "//tr", fields: { name: "normalise-space(td[2])" } }"#)) { error in
            XCTAssertTrue("\(error)".contains("did you mean normalize-space()?"), "\(error)")
        }
    }
}
