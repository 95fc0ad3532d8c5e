import KilnC

/// A stable identifier of a kind of finding, with its default severity and a one-line meaning. Every code Kiln itself
/// can emit is declared in this file (`DiagnosticCode.catalogue`), which `kiln codes` prints and the manifest's
/// `severity` overrides are checked against; a test fails if a code is written as a string anywhere else.
/// Manifest rules bring their own codes (`RuleSpec.code`), which are plain strings.
public struct DiagnosticCode: Hashable, Sendable, CustomStringConvertible {
    /// The code as reports and overrides write it, e.g. `xml.malformed`.
    public let rawValue: String
    /// The severity the finding has unless the manifest overrides it.
    public let severity: Severity
    /// What the finding means, in one line.
    public let meaning: String

    private init(_ rawValue: String, _ severity: Severity, _ meaning: String) {
        self.rawValue = rawValue
        self.severity = severity
        self.meaning = meaning
    }

    public var description: String { rawValue }

    public static func == (lhs: DiagnosticCode, rhs: DiagnosticCode) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// The declared code written `rawValue`, if any.
    public static func named(_ rawValue: String) -> DiagnosticCode? { byName[rawValue] }

    private static let byName = Dictionary(uniqueKeysWithValues: catalogue.map { ($0.rawValue, $0) })
}

extension DiagnosticCode {
    // MARK: - Reading text inputs
    public static let parse = DiagnosticCode("parse", .error, "A line of a text input does not have the shape its source declares (fields, route records).")
    public static let encoding = DiagnosticCode("encoding", .error, "Bytes that are not text in the source's encoding (invalid UTF-8, NUL bytes, unconvertible legacy bytes).")
    public static let encodingMismatch = DiagnosticCode("encoding.mismatch", .warning, "A file declared in a legacy encoding is in fact UTF-8 (or the reverse).")
    public static let inputEmpty = DiagnosticCode("input.empty", .warning, "An input file holds no data at all.")
    public static let inputCompression = DiagnosticCode("input.compression", .error, "A compressed input (gzip, bzip2, xz, zstd) is truncated or damaged, or inflates past a limit: what came before is kept, the rest is not read.")
    public static let lineTooLong = DiagnosticCode("line.too-long", .error, "A line longer than the reader keeps (16 MiB); it is skipped.")
    public static let delimitedQuote = DiagnosticCode("delimited.quote", .warning, "A quote out of place in a quoted delimited file (inside an unquoted field, or text after a closing quote); the text is kept as written.")
    public static let delimitedHeader = DiagnosticCode("delimited.header", .error, "A field the header row of a delimited file has no column for (its values are NULL).")
    public static let delimitedRepeatedHeader = DiagnosticCode("delimited.repeated-header", .warning, "A column name the header row of a delimited file holds more than once; each field reads the first.")
    public static let delimitedLooksQuoted = DiagnosticCode("delimited.looks-quoted", .warning, "Values of a delimited file without the quote option that look quoted (\"BSAM\", a doubled \"\"): their quotes are kept as text; once per file.")
    public static let delimitedHeaderFields = DiagnosticCode("delimited.header-fields", .warning, "A header row passed over (header: true) that names the source's fields in other columns, or has another number of columns: values are read by position.")
    public static let delimitedUnreadColumn = DiagnosticCode("delimited.unread-column", .info, "A column of a delimited file's header row that no field reads.")
    public static let routesUnterminated = DiagnosticCode("routes.unterminated", .warning, "A route's stop list does not end with its separator: the file may be cut short.")
    public static let timetableNoHeading = DiagnosticCode("timetable.no-heading", .error, "Timetable rows before any day heading.")
    public static let timetableRow = DiagnosticCode("timetable.row", .error, "A line inside a timetable block that is not a row the pattern reads.")
    public static let timetableUnknownDay = DiagnosticCode("timetable.unknown-day", .error, "A day heading that names no day of the vocabulary.")
    public static let timetableTime = DiagnosticCode("timetable.time", .error, "A time of day that is not HH:MM within a day.")
    public static let timetableTimeOrder = DiagnosticCode("timetable.time-order", .error, "A period that ends before it starts (and is not an overnight run).")
    public static let timetableMatchLimit = DiagnosticCode("timetable.match-limit", .error, "The timetable pattern hit PCRE2's match limit on a line, which is passed over.")

    // MARK: - Regex extraction
    public static let extractUnmatched = DiagnosticCode("extract.unmatched", .warning, "A line that looks like data (the candidate pattern) but no row pattern captured.")
    public static let extractExpectation = DiagnosticCode("extract.expectation", .error, "A page gave fewer rows, more missed lines or fewer required blocks than its source expects.")
    public static let extractMatchLimit = DiagnosticCode("extract.match-limit", .error, "An extraction pattern hit PCRE2's match limit on a line, which is passed over.")
    public static let regexBudget = DiagnosticCode("regex.budget", .error, "The patterns of a text or timetable source spent more than limits.regexSecondsPerFile on one file; the lines after are not examined.")

    // MARK: - Markup inputs
    public static let htmlMalformed = DiagnosticCode("html.malformed", .error, "libxml2 stopped reading an HTML page; the rest of it is not read.")
    public static let htmlTooLarge = DiagnosticCode("html.too-large", .error, "An HTML page larger than the source's maxPageBytes; it is not parsed.")
    public static let htmlUnreadable = DiagnosticCode("html.unreadable", .error, "An HTML page that cannot be parsed at all; it gives no records.")
    public static let xmlMalformed = DiagnosticCode("xml.malformed", .error, "Malformed XML; the rest of the file is not read (complete records before it are kept).")
    public static let xmlWarning = DiagnosticCode("xml.warning", .warning, "A warning from libxml2 about an XML file.")
    public static let xmlEntity = DiagnosticCode("xml.entity", .error, "The document declares or uses entities, which Kiln never expands; the rest is not read.")
    public static let xmlUnread = DiagnosticCode("xml.unread", .info, "An element of the records that no field of an xml source reads, named with its namespace URI; once per element and source.")
    public static let xmlNamespaceMismatch = DiagnosticCode("xml.namespace-mismatch", .warning, "Elements a field or the record would read but for their namespace URI (another version of the vocabulary: GPX 1.0 for 1.1); not read, named with the URI found and the one declared.")
    public static let xmlExternalDTD = DiagnosticCode("xml.external-dtd", .warning, "The document names an external DTD, which is not loaded.")
    public static let xmlContextMissing = DiagnosticCode("xml.context-missing", .warning, "An enclosing element holds no child element that a context field reads, although records in it need it: they have it NULL.")
    public static let xmlLateContext = DiagnosticCode("xml.late-context", .info, "A context field's child element written after more records than the reader keeps waiting: the file was read a second time for them.")
    public static let kmlCoordinates = DiagnosticCode("kml.coordinates", .error, "A placemark's coordinates are not lon,lat[,alt] tuples; it is kept without a place.")
    public static let kmlGeometry = DiagnosticCode("kml.geometry", .warning, "A placemark with no Point, LineString, Polygon, gx:Track or MultiGeometry (it has no place on the map), or a gx:Track whose when times do not pair with its positions (no timestamps).")
    public static let kmlUnsupportedGeometry = DiagnosticCode("kml.unsupported-geometry", .warning, "A geometry element the kml reader does not map (Model, a LinearRing outside a Polygon, a second geometry); its coordinates are left out.")
    public static let kmlTrackData = DiagnosticCode("kml.track-data", .info, "What a gx:Track holds besides its positions and times (gx:angles, per-position ExtendedData arrays), which the kml reader does not read.")
    public static let kmlExtendedData = DiagnosticCode("kml.extended-data", .info, "ExtendedData values the source does not name in extendedData, so not read.")
    public static let sourceEmpty = DiagnosticCode("source.empty", .warning, "A file gave no record: its selector or record name matches nothing there (a redesigned page?).")
    public static let sourceFieldUnmatched = DiagnosticCode("source.field-unmatched", .info, "A field's selector matches nothing in any record of a page (html) or of a file read whole (xml): the column would be empty.")
    public static let columnUnfilled = DiagnosticCode("column.unfilled", .warning, "A table column that no source maps and no query selects: NULL in every row.")
    public static let tableIdenticalRows = DiagnosticCode("table.identical-rows", .warning, "A table without a primary key was given identical rows; the bundle holds each once (declare a primaryKey to be told which rows collide, at their lines).")
    public static let sourceUnmappedKind = DiagnosticCode("source.unmapped-kind", .info, "Records of a kind the source's into does not map: they went into no table.")

    public static let imageCorrupt = DiagnosticCode("image.corrupt", .error, "An image file that libjpeg-turbo or libpng cannot decode whole (truncated, damaged).")
    public static let imageTooLarge = DiagnosticCode("image.too-large", .error, "An image with more pixels than the source's maxPixels.")
    public static let imageUnsupported = DiagnosticCode("image.unsupported", .warning, "A valid image using a feature the decoder cannot decode (12-bit JPEG precision, a lossless process): its size is taken from its header, its data is not checked.")
    public static let imageMediaType = DiagnosticCode("image.media-type", .warning, "An image whose name says one format and whose bytes another.")
    public static let sqlUnreadable = DiagnosticCode("sql.unreadable", .error, "A legacy SQL script or database that cannot be loaded into the sandbox.")
    public static let sqlQuery = DiagnosticCode("sql.query", .error, "The sqlite source's query does not give the declared fields.")
    public static let sqlStatement = DiagnosticCode("sql.statement", .error, "A statement of a legacy SQL script failed; the others still ran.")
    public static let sqlDenied = DiagnosticCode("sql.denied", .error, "A statement a legacy SQL script may not run in the sandbox (only CREATE, INSERT, transactions).")
    public static let sqlTimeLimit = DiagnosticCode("sql.time-limit", .error, "SQL ran longer than its time limit (limits.sqlSeconds for a rule, seconds for a legacy script) and was stopped.")

    // MARK: - Calendars, JSON and web pages
    public static let icsMalformed = DiagnosticCode("ics.malformed", .error, "libical could not read a line of an iCalendar feed (or the feed is cut short).")
    public static let icsUnread = DiagnosticCode("ics.unread", .info, "A calendar property no field reads that libical could not read either (an empty X-WR-CALDESC, a vendor property without X-); not read.")
    public static let icsSkipped = DiagnosticCode("ics.skipped", .info, "A component that is not an event (VTODO, VJOURNAL…); not read.")
    public static let icsNoEvents = DiagnosticCode("ics.no-events", .warning, "A feed without any VEVENT.")
    public static let icsEmpty = DiagnosticCode("ics.empty", .info, "An event property with no value.")
    public static let icsNoUID = DiagnosticCode("ics.no-uid", .error, "An event without UID; it is not shipped.")
    public static let icsOrphanOverride = DiagnosticCode("ics.orphan-override", .warning, "A RECURRENCE-ID override whose series is not in the feed.")
    public static let icsUnsupported = DiagnosticCode("ics.unsupported", .warning, "A construct read only in part (RANGE=THISANDFUTURE changes its own instance only).")
    public static let icsOverrideUnmatched = DiagnosticCode("ics.override-unmatched", .info, "An override for an instance the rule does not give; shipped as an extra instance.")
    public static let icsCancelled = DiagnosticCode("ics.cancelled", .info, "A cancelled instance; not shipped.")
    public static let icsDuplicate = DiagnosticCode("ics.duplicate", .error, "Two events with the same UID and SEQUENCE that differ.")
    public static let icsSuperseded = DiagnosticCode("ics.superseded", .info, "An older SEQUENCE of an event, replaced by the newer one.")
    public static let icsUnknownTZID = DiagnosticCode("ics.unknown-tzid", .error, "A TZID neither the feed's VTIMEZONE nor the system zone database knows.")
    public static let icsZoneSpan = DiagnosticCode("ics.zone-span", .warning, "An event at a time outside the part of time its VTIMEZONE covers, whose TZID names no zone of the system zone database: its offset there is a guess.")
    public static let icsUnknownCalendarZone = DiagnosticCode("ics.unknown-calendar-zone", .warning, "An X-WR-TIMEZONE the system zone database does not know; the calendar's floating times stay floating.")
    public static let icsFloatingTime = DiagnosticCode("ics.floating-time", .error, "A time without zone in a feed that names none and a source without a timezone option.")
    public static let icsNoStart = DiagnosticCode("ics.no-start", .error, "An event without DTSTART; it has no occurrences.")
    public static let icsBadEnd = DiagnosticCode("ics.bad-end", .error, "DTSTART and DTEND of different types (a date and a date-time).")
    public static let icsEndBeforeStart = DiagnosticCode("ics.end-before-start", .error, "An event that ends before it starts (DTEND or a negative DURATION).")
    public static let icsUnbounded = DiagnosticCode("ics.unbounded", .error, "A rule that repeats forever in a source without a window.")
    public static let icsBadRRule = DiagnosticCode("ics.bad-rrule", .error, "An RRULE libical cannot expand; only DTSTART is shipped.")
    public static let icsTooMany = DiagnosticCode("ics.too-many", .error, "More instances in the window than the source's maximumOccurrences.")
    public static let icsFileOccurrences = DiagnosticCode("ics.file-occurrences", .error, "A calendar file expands to more occurrences than limits.occurrencesPerFile; those beyond are not shipped.")
    public static let icsBadRDate = DiagnosticCode("ics.bad-rdate", .error, "An RDATE value the ics reader cannot use (not of DTSTART's type, a period that ends before it starts); ignored.")
    public static let jsonMalformed = DiagnosticCode("json.malformed", .error, "Malformed JSON; the rest of the file is not read.")
    public static let jsonNoRecords = DiagnosticCode("json.no-records", .warning, "Nothing at the source's records path in a file.")
    public static let jsonUnread = DiagnosticCode("json.unread", .info, "A member of the records that no field of the source reads; once per member and source.")
    public static let jsonLateContext = DiagnosticCode("json.late-context", .info, "A context member written after more records than the reader keeps waiting: the file was read a second time for them.")
    public static let jsonNoMemberName = DiagnosticCode("json.no-member-name", .error, "\"@key\" on records or context objects that are array elements, which have no member name.")
    public static let jsonNotObject = DiagnosticCode("json.not-object", .error, "A value at the records path that is not an object, in a source without a \".\" field (which reads each value there as a record); not read.")
    public static let jsonTooLong = DiagnosticCode("json.too-long", .error, "A JSON string or number longer than 16 MiB (the rest of the file is not read), or an object or array field whose JSON is longer (the field is NULL).")
    public static let htmlNoContent = DiagnosticCode("html.no-content", .error, "A web page without its content element; not shipped.")
    public static let htmlSanitized = DiagnosticCode("html.sanitized", .info, "Markup removed from a shipped page (scripts, styles, event handlers, iframes, forms, javascript: links).")
    public static let htmlContentRemoved = DiagnosticCode("html.content-removed", .warning, "An image that is not a shipped file, or a link the app cannot open offline, removed from a shipped page (a link's text is kept).")
    public static let htmlUnwrapped = DiagnosticCode("html.unwrapped", .info, "Elements outside the shipped subset unwrapped, their text kept.")

    // MARK: - Wikitext
    public static let wikitextCoordinates = DiagnosticCode("wikitext.coordinates", .info, "A listing's or page's coordinate that is not a number of degrees; left out.")
    public static let wikitextCoordinatesRange = DiagnosticCode("wikitext.coordinates-range", .warning, "A coordinate outside -90…90 or -180…180; left out.")
    public static let wikitextURL = DiagnosticCode("wikitext.url", .warning, "A listing's url that is not a web address; the field is left empty.")
    public static let wikitextEmail = DiagnosticCode("wikitext.email", .warning, "A listing's e-mail that is not an address; the field is left empty.")
    public static let wikitextParent = DiagnosticCode("wikitext.parent", .info, "A page names several parents; the first is used.")
    public static let wikitextTag = DiagnosticCode("wikitext.tag", .warning, "A Wikitravel listing tag read tolerantly (unclosed, mismatched), with what was recovered.")
    public static let wikitextTemplate = DiagnosticCode("wikitext.template", .warning, "A template never closed with }} (MediaWiki shows it as text), or nesting templates deeper than MediaWiki does (100 levels): it is not read.")
    public static let wikitextUnknownParameter = DiagnosticCode("wikitext.unknown-parameter", .info, "A listing parameter with a value that no field takes (e.g. a typo, typr=go); declare it in parameters or ignoreParameters.")
    public static let wikitextTrailingText = DiagnosticCode("wikitext.trailing-text", .info, "Text after listings that the wiki's conventions do not take as a description, counted once per file.")
    public static let wikitextListingLike = DiagnosticCode("wikitext.listing-like", .info, "Templates written like listings that no listing convention declares.")
    public static let wikitextUnknownTemplate = DiagnosticCode("wikitext.unknown-template", .info, "A template inside a listing value that is not declared, so left out of the value.")

    // MARK: - Shaping values
    public static let value = DiagnosticCode("value", .error, "A value that does not convert to its column's declared type; staged as its text.")
    public static let valueBlob = DiagnosticCode("value.blob", .error, "A BLOB (binary value of an sqlite source) for a column not declared blob; staged as its hexadecimal text.")
    public static let valueUnknownTerm = DiagnosticCode("value.unknown-term", .error, "A text that names no term of its vocabulary.")
    public static let valueTimeOrder = DiagnosticCode("value.time-order", .error, "An end time before its start time that is not an overnight run.")
    public static let valueMonth = DiagnosticCode("value.month", .error, "A season that is not month names, Roman numerals or a range of them.")

    // MARK: - Rules (the codes of the declared constraints)
    public static let duplicateKey = DiagnosticCode("duplicate-key", .error, "Two rows share a key (primary key or unique set) with different values elsewhere.")
    public static let duplicateRow = DiagnosticCode("duplicate-row", .warning, "Identical rows under one key: they merge into one in the bundle.")
    public static let foreignKey = DiagnosticCode("foreign-key", .error, "A reference to a row that does not exist.")
    public static let notNull = DiagnosticCode("not-null", .error, "A required value is missing.")
    public static let range = DiagnosticCode("range", .error, "A number outside its column's declared range.")
    public static let enumeration = DiagnosticCode("enum", .error, "A value that is not one of its column's allowed values.")
    public static let pattern = DiagnosticCode("pattern", .error, "A value that does not match its column's pattern.")
    public static let outOfBounds = DiagnosticCode("out-of-bounds", .error, "Coordinates outside the declared box.")
    public static let swappedCoordinates = DiagnosticCode("swapped-coordinates", .error, "Coordinates outside the box that would be inside it swapped: latitude and longitude exchanged.")
    public static let sql = DiagnosticCode("sql", .error, "A row returned by a manifest SQL rule that names no code of its own.")

    // MARK: - Build and baseline
    public static let bundle = DiagnosticCode("bundle", .error, "The bundle could not be completed (a foreign-key or schema check SQLite made while writing it failed).")
    public static let bundleTooLarge = DiagnosticCode("bundle.too-large", .error, "The new bundle, or one of its tables, is larger than the manifest's limits (bundleBytes, tables); the previous bundle stays.")
    public static let targetUnsupported = DiagnosticCode("target.unsupported", .error, "A table, index, view or trigger of the bundle uses a module, tokenizer option, function or syntax a manifest target's SQLite lacks, and Kiln has nothing to write instead.")
    public static let targetFold = DiagnosticCode("target.fold", .warning, "A target's full-text tokenizer folds fewer characters than the manifest's (remove_diacritics 2 before SQLite 3.27.0).")
    public static let diffBaseline = DiagnosticCode("diff.baseline", .error, "The new bundle cannot be compared with the baseline.")
    public static let buildCache = DiagnosticCode("build.cache", .info, "The build cache could not be used (written by another Kiln, damaged or edited, or the bundle or report changed since it was recorded): the bundle was built in full.")
    public static let diffNoBaseline = DiagnosticCode("diff.no-baseline", .info, "The baseline does not exist yet: the new bundle becomes the first one.")
    public static let diffUserFilledSchema = DiagnosticCode("diff.user-filled-schema", .error, "The schema of a table the app fills (userFilled) changed since the previous bundle without a new schemaVersion: the app could not carry its users' rows over.")
    public static let diffBundle = DiagnosticCode("diff.bundle", .error, "The two files are bundles of different pipelines.")
    public static let diffUserVersion = DiagnosticCode("diff.user-version", .error, "The schema changed but PRAGMA user_version did not.")
    public static let diffDerived = DiagnosticCode("diff.derived", .warning, "A derived column named in thresholds that no table has (a typo).")
    public static let diffThreshold = DiagnosticCode("diff.threshold", .error, "More rows removed or changed since the baseline than the thresholds allow.")

    // MARK: - kiln fetch, and the build's check of what it fetched
    public static let fetchFailed = DiagnosticCode("fetch.failed", .error, "A URL could not be fetched (an error status, a failed or cut transfer, a limit, a content type that does not fit) and there is no earlier copy of its file.")
    public static let fetchKept = DiagnosticCode("fetch.kept", .warning, "A URL's new response was refused or its transfer failed; the earlier copy of its file is kept.")
    public static let fetchDisallowed = DiagnosticCode("fetch.disallowed", .error, "robots.txt disallows a URL the manifest lists; no request was made.")
    public static let fetchEdited = DiagnosticCode("fetch.edited", .warning, "A fetched file's bytes differ from those its capture recorded: it was edited after kiln fetch saved it.")
    public static let fetchMissing = DiagnosticCode("fetch.missing", .error, "A file the capture record lists for a fetching source is not there: fetch again, or restore it.")
    public static let fetchNoRows = DiagnosticCode("fetch.no-rows", .error, "A fetched file that gave rows in the last build or the baseline bundle gives none now: the site's layout may have changed (the finding names its URL and both capture times).")
    public static let fetchDerivation = DiagnosticCode("fetch.derivation", .error, "A source's URLs derived from another source's fetched files could not all be made: a record or link made no valid http(s) URL, or none was found at all (the source's earlier files are kept).")
    public static let fetchUncaptured = DiagnosticCode("fetch.uncaptured", .info, "Files of a fetching source that the capture record does not list (said once per source, when the pipeline has captures): they did not come from kiln fetch, so no URL leads to their rows.")

    // MARK: - kiln export
    public static let exportServiceEnding = DiagnosticCode("export.service-ending", .warning, "The export's service period (its servicePeriod, else the feed_end_date of the feed_info.txt it writes) ends at most servicePeriod.warnDays (30) days after the export date, or has ended.")
    public static let exportExpiredCalendar = DiagnosticCode("export.expired-calendar", .warning, "A service of the exported GTFS calendar (calendar.txt, calendar_dates.txt) runs on no day from the export date on: gtfs-validator's expired_calendar.")

    // MARK: - kiln test
    public static let fixtureDiffers = DiagnosticCode("fixture.differs", .error, "What a source extracts from a fixture's input differs from the fixture's expected file.")
    public static let fixtureMissing = DiagnosticCode("fixture.missing", .error, "A fixture's expected file does not exist (kiln test --update writes it).")

    // MARK: - kiln check
    public static let checkFile = DiagnosticCode("check.file", .error, "The file is not a readable bundle (missing, empty, foreign, truncated).")
    public static let checkIntegrity = DiagnosticCode("check.integrity", .error, "PRAGMA integrity_check found damage.")
    public static let checkForeignKey = DiagnosticCode("check.foreign-key", .error, "PRAGMA foreign_key_check found dangling references.")
    public static let checkFullText = DiagnosticCode("check.full-text", .error, "A full-text index does not hold every row of its table.")
    public static let checkMetadata = DiagnosticCode("check.metadata", .error, "kiln_metadata is missing or disagrees with the bundle.")
    public static let checkRule = DiagnosticCode("check.rule", .error, "A manifest rule could not run on the bundle.")
    public static let checkNotRun = DiagnosticCode("check.not-run", .info, "A rule on tables that are not shipped, so not run on a bundle.")
    public static let schemaTable = DiagnosticCode("schema.table", .error, "A table missing from one side or present only on the other.")
    public static let schemaColumn = DiagnosticCode("schema.column", .error, "A column missing, added, or declared differently.")
    public static let schemaPrimaryKey = DiagnosticCode("schema.primary-key", .error, "A table's primary key differs.")
    public static let schemaIndex = DiagnosticCode("schema.index", .error, "An index missing, added, or over other columns.")
    public static let schemaForeignKey = DiagnosticCode("schema.foreign-key", .error, "A foreign key missing, added, or different.")
    public static let schemaDefinition = DiagnosticCode("schema.definition", .error, "A table's CREATE statement differs (constraints, CHECKs).")
    public static let schemaFullText = DiagnosticCode("schema.full-text", .error, "A full-text table is missing or declared differently.")
    public static let schemaSpatial = DiagnosticCode("schema.spatial", .error, "An R*Tree is missing or declared differently.")
    public static let schemaUserVersion = DiagnosticCode("schema.user-version", .error, "PRAGMA user_version differs from the manifest's schemaVersion.")

    /// Every code Kiln can emit, in the order `kiln codes` prints them.
    public static let catalogue: [DiagnosticCode] = [
        parse, encoding, encodingMismatch, inputEmpty, inputCompression, lineTooLong, delimitedQuote, delimitedHeader, delimitedRepeatedHeader, delimitedLooksQuoted, delimitedHeaderFields, delimitedUnreadColumn, routesUnterminated, timetableNoHeading, timetableRow,
        timetableUnknownDay, timetableTime, timetableTimeOrder, timetableMatchLimit,
        extractUnmatched, extractExpectation, extractMatchLimit, regexBudget,
        htmlMalformed, htmlTooLarge, htmlUnreadable, xmlMalformed, xmlWarning, xmlEntity, xmlUnread, xmlNamespaceMismatch, xmlExternalDTD, xmlContextMissing, xmlLateContext, kmlCoordinates, kmlGeometry,
        kmlUnsupportedGeometry, kmlTrackData, kmlExtendedData, sourceEmpty, sourceFieldUnmatched, columnUnfilled, tableIdenticalRows, sourceUnmappedKind, imageCorrupt, imageTooLarge, imageUnsupported, imageMediaType, sqlUnreadable, sqlQuery, sqlStatement,
        sqlDenied, sqlTimeLimit,
        icsMalformed, icsUnread, icsSkipped, icsNoEvents, icsEmpty, icsNoUID, icsOrphanOverride, icsUnsupported, icsOverrideUnmatched,
        icsCancelled, icsDuplicate, icsSuperseded, icsUnknownTZID, icsZoneSpan, icsUnknownCalendarZone, icsFloatingTime, icsNoStart, icsBadEnd, icsEndBeforeStart,
        icsUnbounded, icsBadRRule, icsTooMany, icsFileOccurrences, icsBadRDate, jsonMalformed, jsonNoRecords, jsonUnread, jsonNotObject, jsonTooLong,
        jsonLateContext, jsonNoMemberName,
        htmlNoContent, htmlSanitized, htmlContentRemoved, htmlUnwrapped,
        wikitextCoordinates, wikitextCoordinatesRange, wikitextURL, wikitextEmail, wikitextParent, wikitextTag, wikitextTemplate,
        wikitextUnknownParameter, wikitextTrailingText, wikitextListingLike, wikitextUnknownTemplate,
        value, valueBlob, valueUnknownTerm, valueTimeOrder, valueMonth,
        duplicateKey, duplicateRow, foreignKey, notNull, range, enumeration, pattern, outOfBounds, swappedCoordinates, sql,
        bundle, buildCache, bundleTooLarge, targetUnsupported, targetFold, diffBaseline, diffNoBaseline, diffBundle, diffUserVersion, diffUserFilledSchema, diffDerived, diffThreshold,
        exportServiceEnding, exportExpiredCalendar, fixtureDiffers, fixtureMissing,
        checkFile, checkIntegrity, checkForeignKey, checkFullText, checkMetadata, checkRule, checkNotRun,
        schemaTable, schemaColumn, schemaPrimaryKey, schemaIndex, schemaForeignKey, schemaDefinition, schemaFullText, schemaSpatial,
        schemaUserVersion,
        fetchFailed, fetchKept, fetchDisallowed, fetchDerivation, fetchEdited, fetchMissing, fetchUncaptured, fetchNoRows,
    ]
}
