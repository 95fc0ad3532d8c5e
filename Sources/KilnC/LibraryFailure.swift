/// A C library that could not start (it is out of memory), or a file a wrapper could not read or write, said in one
/// sentence that names the library or the file. The wrappers know no Kiln error type; the layers above report this
/// as an I/O failure.
package struct LibraryFailure: Error, CustomStringConvertible, Sendable {
    /// The sentence.
    package let description: String

    /// A failure described by `description`.
    package init(_ description: String) { self.description = description }
}
