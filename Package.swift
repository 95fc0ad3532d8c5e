// swift-tools-version:6.0
import PackageDescription

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
        .target(name: "KilnCore", dependencies: ["KilnC"]),
        .target(name: "KilnManifest", dependencies: ["KilnC", "KilnCore"]),
        .target(name: "KilnReaders", dependencies: ["KilnC", "KilnCore", "KilnManifest"]),
        .target(name: "KilnBuild", dependencies: ["KilnC", "KilnCore", "KilnManifest", "KilnReaders"]),
        .target(name: "KilnKit", dependencies: ["KilnC", "KilnCore", "KilnManifest", "KilnReaders", "KilnBuild"]),
        .executableTarget(name: "kiln", dependencies: ["KilnKit"]),
        .executableTarget(name: "kiln-bench", dependencies: ["KilnKit"]),
        .target(name: "KilnTestSupport", path: "Tests/KilnTestSupport"),
        .testTarget(name: "KilnKitTests", dependencies: ["KilnKit", "KilnTestSupport"]),
        .testTarget(name: "KilnCLITests", dependencies: ["KilnKit", "kiln", "KilnTestSupport"]),
    ]
)
