import Foundation
import KilnC

/// Which file a path or an open descriptor is, whatever its name: the device and inode `stat` gives. The registries
/// that must recognise a file under any name (`ProtectedFiles`, `InputIdentity`) compare these.
package struct FileKey: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64

    /// The file `url` names now (links followed), or `nil` when there is none.
    package init?(_ url: URL) {
        guard let status = FileStatus(path: url.path) else { return nil }
        self.init(status)
    }

    /// The file open on `descriptor`, or `nil` when the system cannot say.
    package init?(descriptor: Int32) {
        guard let status = FileStatus(descriptor: descriptor) else { return nil }
        self.init(status)
    }

    /// The file `status` describes.
    package init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
    }
}
