import KilnC

/// The one way Kiln moves a value that is not `Sendable` (a reader, a file handle, a digest's state, an error) to
/// another thread: the thread that made it wraps it, gives it to the new thread or queue, and never touches it again;
/// from then on only the receiving thread uses it. The compiler cannot check that promise, so it is made here, once,
/// and every use names what it hands over (docs/ARCHITECTURE.md, "One way to hand a value to another thread").
///
/// Unchecked Sendable: the sending thread never touches `value` again once it has handed it over.
package struct Handoff<Value>: @unchecked Sendable {
    /// The value, for the receiving thread only.
    package let value: Value

    /// Wraps `value`, which the calling thread gives up.
    package init(_ value: Value) { self.value = value }
}
