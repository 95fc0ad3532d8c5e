/// Kiln as one library: every layer, for a program (the command-line tool, the benchmarks, the tests) that uses
/// Kiln as a whole. The layers below are separate modules so that the compiler holds each to what it may know.
@_exported import KilnCore
@_exported import KilnManifest
@_exported import KilnReaders
@_exported import KilnBuild
@_exported import KilnFetch
