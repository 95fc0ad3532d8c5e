import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 (a free port the system picks) that counts the connections made to it, for tests that
/// prove Kiln opens none. It never answers and never blocks: connections wait in the kernel's queue until counted.
/// Closed when released.
final class LoopbackListener {
    /// The port it listens on.
    private(set) var port: UInt16 = 0
    private let socketDescriptor: Int32

    /// - Throws: `POSIXError` when the socket cannot be set up.
    init() throws {
        socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic -> Bool in
                bind(socketDescriptor, generic, length) == 0 && listen(socketDescriptor, 64) == 0
                    && getsockname(socketDescriptor, generic, &length) == 0
            }
        }
        guard bound, fcntl(socketDescriptor, F_SETFL, O_NONBLOCK) == 0 else {
            close(socketDescriptor)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(socketDescriptor) }

    /// An address on this listener, e.g. `http://127.0.0.1:PORT/name`.
    func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    /// How many connections were made so far (each is accepted and closed at once).
    func connectionCount() -> Int {
        var count = 0
        while true {
            let connection = accept(socketDescriptor, nil, nil)
            guard connection >= 0 else { return count }
            close(connection)
            count += 1
        }
    }
}
