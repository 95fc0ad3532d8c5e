import Foundation
import KilnC
import KilnCore

/// A SQLite release number (`3.28.0`), compared part by part.
public struct SQLiteVersion: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var major: Int, minor: Int, patch: Int

    public init(_ major: Int, _ minor: Int, _ patch: Int = 0) {
        (self.major, self.minor, self.patch) = (major, minor, patch)
    }

    /// Reads `3.45`, `3.45.1` or `3.8.10.2` (a fourth part is ignored); `nil` for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
        guard (2...4).contains(parts.count), parts.allSatisfy({ $0 != nil && $0! >= 0 }), parts[0] == 3 else { return nil }
        self.init(parts[0]!, parts[1]!, parts.count > 2 ? parts[2]! : 0)
    }

    public var description: String { "\(major).\(minor).\(patch)" }

    public static func < (lhs: SQLiteVersion, rhs: SQLiteVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }
}

/// A compile-time part of SQLite that a build may leave out: the virtual-table modules and the JSON functions.
public enum SQLiteOption: String, Sendable, CaseIterable {
    case fts3, fts4, fts5, rtree, json
}

/// One row of `SQLiteTargetTable`: from which platform release on a platform's SQLite has this version and these
/// options, and where that is written.
public struct SQLiteTargetRow: Sendable {
    /// `ios` or `android`.
    public var platform: String
    /// The first release with this SQLite: an Android API level, an iOS major version.
    public var release: Int
    public var sqlite: SQLiteVersion
    public var options: Set<SQLiteOption>
    /// Where the version and the options come from (docs/guide/app.md cites each in full).
    public var source: String
}

/// The SQLite of each target platform release, as data: the one place Kiln learns what a device's SQLite has.
/// Android's framework SQLite (`android.database.sqlite`): versions per API level from the package summary of
/// android.database.sqlite on developer.android.com; options from AOSP external/sqlite dist/Android.bp
/// (`SQLITE_ENABLE_FTS3`, `SQLITE_ENABLE_FTS3_BACKWARDS`, `SQLITE_ENABLE_FTS4`, ICU; no FTS5, no R*Tree, no JSON1:
/// JSON is only there from 3.38, where it is built in). iOS: the system SQLite's versions as reported by
/// `sqlite_version()` per iOS release (iOS 8–13 collected on iifx.dev; iOS 16 from SQLiteFlow's issue 198; iOS 26
/// from GRDB's issue 1874), and for iOS 14 and 15 the lower bounds GRDB's availability annotations give (docs/guide/app.md
/// cites each); Apple builds it with FTS3, FTS4, FTS5, R*Tree and JSON. iOS 17 and 18 have no cited version: they take
/// iOS 16's row, a lower bound.
public enum SQLiteTargetTable {
    private static let android: Set<SQLiteOption> = [.fts3, .fts4]
    private static let apple: Set<SQLiteOption> = [.fts3, .fts4, .fts5, .rtree, .json]
    private static let androidSource = "android.database.sqlite package summary; AOSP external/sqlite dist/Android.bp"
    private static let iosSource = "sqlite_version() per iOS release (iifx.dev); Apple's build options"
    private static let grdbLowerBound = "GRDB 7.8.0's @available annotations (a lower bound); Apple's build options"

    public static let rows: [SQLiteTargetRow] = [
        SQLiteTargetRow(platform: "android", release: 21, sqlite: SQLiteVersion(3, 8), options: android, source: androidSource),
        SQLiteTargetRow(platform: "android", release: 24, sqlite: SQLiteVersion(3, 9), options: android, source: androidSource),
        SQLiteTargetRow(platform: "android", release: 26, sqlite: SQLiteVersion(3, 18), options: android, source: androidSource),
        SQLiteTargetRow(platform: "android", release: 27, sqlite: SQLiteVersion(3, 19), options: android, source: androidSource),
        SQLiteTargetRow(platform: "android", release: 28, sqlite: SQLiteVersion(3, 22), options: android, source: androidSource),
        SQLiteTargetRow(platform: "android", release: 30, sqlite: SQLiteVersion(3, 28), options: android, source: androidSource),
        SQLiteTargetRow(platform: "android", release: 31, sqlite: SQLiteVersion(3, 32), options: android, source: androidSource),
        SQLiteTargetRow(platform: "android", release: 34, sqlite: SQLiteVersion(3, 39), options: android, source: androidSource),
        SQLiteTargetRow(platform: "android", release: 35, sqlite: SQLiteVersion(3, 42), options: android, source: androidSource),
        SQLiteTargetRow(platform: "ios", release: 8, sqlite: SQLiteVersion(3, 8, 5), options: apple, source: iosSource),
        SQLiteTargetRow(platform: "ios", release: 9, sqlite: SQLiteVersion(3, 8, 10), options: apple, source: iosSource),
        SQLiteTargetRow(platform: "ios", release: 10, sqlite: SQLiteVersion(3, 16, 0), options: apple, source: iosSource),
        SQLiteTargetRow(platform: "ios", release: 11, sqlite: SQLiteVersion(3, 19, 3), options: apple, source: iosSource),
        SQLiteTargetRow(platform: "ios", release: 12, sqlite: SQLiteVersion(3, 24, 0), options: apple, source: iosSource),
        SQLiteTargetRow(platform: "ios", release: 13, sqlite: SQLiteVersion(3, 28, 0), options: apple, source: iosSource),
        SQLiteTargetRow(platform: "ios", release: 14, sqlite: SQLiteVersion(3, 30, 0), options: apple, source: grdbLowerBound),
        SQLiteTargetRow(platform: "ios", release: 15, sqlite: SQLiteVersion(3, 35, 0), options: apple, source: grdbLowerBound),
        SQLiteTargetRow(platform: "ios", release: 16, sqlite: SQLiteVersion(3, 39, 0), options: apple,
                        source: "SQLiteFlow-Issues issue 198 (sqlite_version() on iOS 16); Apple's build options"),
        SQLiteTargetRow(platform: "ios", release: 26, sqlite: SQLiteVersion(3, 51, 0), options: apple,
                        source: "GRDB.swift issue 1874 (sqlite_version() and compile options on iOS 26.0)"),
    ]

    /// The options of an app's own SQLite build (requery's sqlite-android, SQLite's own Android bindings): FTS3, FTS4,
    /// FTS5, R*Tree and JSON, as their Android.mk files enable.
    public static let ownBuild: Set<SQLiteOption> = [.fts3, .fts4, .fts5, .rtree, .json]

    /// The platforms a manifest's `targets` may name.
    public static let platforms = ["android", "ios"]

    /// The row in force for `release` of `platform`: the last one at or before it (later iOS releases than the table
    /// knows take its newest row, a lower bound).
    public static func row(platform: String, release: Int) -> SQLiteTargetRow? {
        rows.filter { $0.platform == platform && $0.release <= release }.max { $0.release < $1.release }
    }
}

/// A device the bundle must open on, from the manifest's `targets`: a platform release with its framework SQLite, or
/// an app that ships its own SQLite.
public struct SQLiteTarget: Sendable, Equatable {
    /// `ios` or `android`; the target's own bundle, when it needs one, is `<bundle>.<platform>.sqlite`.
    public var platform: String
    /// The platform release as written (`24`), or `nil` for an app's own SQLite.
    public var release: String?
    public var sqlite: SQLiteVersion
    public var options: Set<SQLiteOption>

    public init(platform: String, release: String?, sqlite: SQLiteVersion, options: Set<SQLiteOption>) {
        self.platform = platform
        self.release = release
        self.sqlite = sqlite
        self.options = options
    }

    /// How messages name the target: `android 24 (SQLite 3.9.0)`, `android (own SQLite 3.45.0)`.
    public var name: String {
        if let release { return "\(platform) \(release) (SQLite \(sqlite))" }
        return "\(platform) (own SQLite \(sqlite))"
    }

    /// True when the target's SQLite is at least `version`.
    public func has(_ version: SQLiteVersion) -> Bool { sqlite >= version }

    /// True when the target's SQLite was built with `option` (JSON counts as built in from 3.38 on).
    public func has(_ option: SQLiteOption) -> Bool {
        options.contains(option) || (option == .json && sqlite >= SQLiteVersion(3, 38))
    }
}
