// swift-tools-version:6.2
import PackageDescription

/// Release builds optimize across Kiln's own targets, as if they were one module: every function's body is available
/// to the layers above (`-enable-cmo-everything`), so the readers' per-line calls into Core and the C wrappers are
/// inlined and specialized. Without it, splitting the layers into targets made regex extraction 1.7× slower; with
/// SwiftPM's conservative default or plain `-cross-module-optimization`, 1.15× (`scripts/bench --against`,
/// docs/PERFORMANCE.md). Debug builds are left as they are, for compile times.
let kilnSettings: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization", "-Xfrontend", "-enable-cmo-everything"], .when(configuration: .release))]
/// Strict memory safety (SE-0458) for every layer above KilnC: unsafe code belongs in KilnC's wrappers, so the
/// compiler warns about any use of it elsewhere.
let strict: [SwiftSetting] = [.strictMemorySafety(), .treatWarning("StrictMemorySafety", as: .error)]

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
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CGlibc"),
        // The layers, lowest first; each may import only the ones before it (docs/ARCHITECTURE.md, "Layers").
        .target(name: "KilnC", dependencies: ["CSQLite", "CPCRE2", "CLibXML2", "CCrypto", "CICU", "CJPEG", "CPNG", "CLibZip", "CLibical", "CYAJL", "CZlib", "CBZip2", "CLZMA", "CZstd", "CCurl", "CGlibc"], swiftSettings: kilnSettings),
        .target(name: "KilnCore", dependencies: ["KilnC"], swiftSettings: kilnSettings + strict),
        .target(name: "KilnManifest", dependencies: ["KilnC", "KilnCore"], swiftSettings: kilnSettings + strict),
        .target(name: "KilnReaders", dependencies: ["KilnC", "KilnCore", "KilnManifest"], swiftSettings: kilnSettings + strict),
        .target(name: "KilnBuild", dependencies: ["KilnC", "KilnCore", "KilnManifest", "KilnReaders"], swiftSettings: kilnSettings + strict),
        .target(name: "KilnFetch", dependencies: ["KilnC", "KilnCore", "KilnManifest", "KilnReaders", "KilnBuild"], swiftSettings: kilnSettings + strict),
        .target(name: "KilnKit", dependencies: ["KilnC", "KilnCore", "KilnManifest", "KilnReaders", "KilnBuild", "KilnFetch"], swiftSettings: kilnSettings + strict),
        .executableTarget(name: "kiln", dependencies: ["KilnC", "KilnKit"], swiftSettings: kilnSettings + strict),
        // The example program of docs/guide/library.md: a bundle built and checked through `import KilnKit` alone.
        .executableTarget(name: "kiln-example", dependencies: ["KilnKit"], path: "Examples/build-bundle", swiftSettings: kilnSettings + strict),
        .executableTarget(name: "kiln-bench", dependencies: ["KilnKit"], swiftSettings: kilnSettings + strict),
        .target(name: "KilnTestSupport", path: "Tests/KilnTestSupport"),
        .testTarget(name: "KilnKitTests", dependencies: ["KilnC", "KilnKit", "KilnTestSupport"]),
        .testTarget(name: "KilnCLITests", dependencies: ["KilnC", "KilnKit", "kiln", "kiln-example", "KilnTestSupport"]),
    ]
)
