// swift-tools-version:6.2
import PackageDescription

/// Strict memory safety (SE-0458) for every layer above KilnC: unsafe code belongs in KilnC's wrappers, so the
/// compiler warns about any use of it elsewhere.
let strict: [SwiftSetting] = [.strictMemorySafety()]

let package = Package(
    name: "Kiln",
    products: [
        .library(name: "KilnKit", targets: ["KilnKit"]),
        .executable(name: "kiln", targets: ["kiln"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CPCRE2", pkgConfig: "libpcre2-8", providers: [.apt(["libpcre2-dev"])]),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CICU", pkgConfig: "icu-i18n", providers: [.apt(["libicu-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CLibZip", pkgConfig: "libzip", providers: [.apt(["libzip-dev"])]),
        .systemLibrary(name: "CLibical", pkgConfig: "libical", providers: [.apt(["libical-dev"])]),
        .systemLibrary(name: "CYAJL", pkgConfig: "yajl", providers: [.apt(["libyajl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CBZip2", providers: [.apt(["libbz2-dev"])]),
        .systemLibrary(name: "CLZMA", pkgConfig: "liblzma", providers: [.apt(["liblzma-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "CGlibc"),
        // The layers, lowest first; each may import only the ones before it (docs/ARCHITECTURE.md, "Layers").
        .target(name: "KilnC", dependencies: ["CSQLite", "CPCRE2", "CLibXML2", "CCrypto", "CICU", "CJPEG", "CPNG", "CLibZip", "CLibical", "CYAJL", "CZlib", "CBZip2", "CLZMA", "CZstd", "CGlibc"]),
        .target(name: "KilnCore", dependencies: ["KilnC"], swiftSettings: strict),
        .target(name: "KilnManifest", dependencies: ["KilnC", "KilnCore"], swiftSettings: strict),
        .target(name: "KilnReaders", dependencies: ["KilnC", "KilnCore", "KilnManifest"], swiftSettings: strict),
        .target(name: "KilnBuild", dependencies: ["KilnC", "KilnCore", "KilnManifest", "KilnReaders"], swiftSettings: strict),
        .target(name: "KilnKit", dependencies: ["KilnC", "KilnCore", "KilnManifest", "KilnReaders", "KilnBuild"], swiftSettings: strict),
        .executableTarget(name: "kiln", dependencies: ["KilnKit"], swiftSettings: strict),
        .executableTarget(name: "kiln-bench", dependencies: ["KilnKit"], swiftSettings: strict),
        .target(name: "KilnTestSupport", path: "Tests/KilnTestSupport"),
        .testTarget(name: "KilnKitTests", dependencies: ["KilnKit", "KilnTestSupport"]),
        .testTarget(name: "KilnCLITests", dependencies: ["KilnKit", "kiln", "KilnTestSupport"]),
    ]
)
