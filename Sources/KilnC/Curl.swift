internal import CCurl
import Foundation

/// Whether a connection to `address` (an IPv4 or IPv6 address as text) on `port` goes to a non-public place, one a
/// public host may not redirect to: `HTTPClient.isNonPublic` of the address unless a test says otherwise (a loopback
/// port it declares public).
package typealias AddressClassifier = @Sendable (_ address: String, _ port: Int) -> Bool

/// One HTTP GET as `kiln fetch` asks for it: the URL, the headers, and the limits the transfer must stay within.
/// Redirects are not followed here: a 3xx comes back with its `Location` resolved (`HTTPResponse.redirectURL`), and
/// the caller decides whether to follow it.
package struct HTTPRequest: Sendable {
    /// An absolute `http` or `https` URL; libcurl is told to speak no other protocol.
    package var url: String
    /// Extra request headers, `Name: value` each (validators, `Range`).
    package var headers: [String] = []
    /// The `User-Agent` header.
    package var userAgent: String
    /// The whole transfer's time limit, in seconds.
    package var timeout: Double
    /// How long a connection may take to open, in seconds.
    package var connectTimeout: Double = 15
    /// A body that moves no byte for this many seconds is a stall: the transfer stops.
    package var stallSeconds: Int = 15
    /// The most body bytes accepted as they arrive (Content-Encoding included).
    package var maxTransferredBytes: Int64
    /// The most body bytes accepted once decoded (a decompression bomb stops here).
    package var maxDecodedBytes: Int64
    /// True to offer the encodings libcurl decodes (gzip, deflate, br, zstd) and hand out the decoded body.
    package var decode = true
    /// True to refuse a connection to a loopback, private, link-local or otherwise non-public address.
    package var refuseNonPublicAddresses = false
    /// What decides that an address is non-public, for `refuseNonPublicAddresses`.
    package var isNonPublic: AddressClassifier = HTTPClient.standardClassifier
    /// True to keep the request's header as libcurl sent it (`HTTPResponse.requestHeader`), for an archive of the
    /// exchange.
    package var keepsRequestHeader = false

    /// A GET of `url` sending `userAgent`, within `timeout` seconds and `maxBytes` bytes (as sent and decoded).
    package init(url: String, userAgent: String, timeout: Double, maxBytes: Int64) {
        self.url = url
        self.userAgent = userAgent
        self.timeout = timeout
        maxTransferredBytes = maxBytes
        maxDecodedBytes = maxBytes
    }
}

/// A response header as received.
package struct HTTPHeader: Sendable, Hashable {
    package var name: String
    package var value: String

    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// The field a header line (`Name: value`, HTTP's or WARC's) holds, its name and value trimmed of spaces, tabs
    /// and line ends; `nil` for a line without a colon.
    package init?(line: some StringProtocol) {
        guard let field = Array(line.utf8).withUnsafeBytes({ HTTPHeader.field(in: $0[...]) }) else { return nil }
        self = field
    }

    /// The field the bytes of a header line hold (`init(line:)`), read where they lie: libcurl hands every header
    /// line of every response to `transferHeader`, so no `Data` or Foundation string is made on the way.
    static func field(in line: Slice<UnsafeRawBufferPointer>) -> HTTPHeader? {
        let line = trimmed(line)
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return HTTPHeader(name: text(trimmed(line[..<colon])), value: text(trimmed(line[(colon + 1)...])))
    }

    /// `bytes` without the spaces, tabs and line ends at either end.
    static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        guard let first = bytes.firstIndex(where: { !blank($0) }), let last = bytes.lastIndex(where: { !blank($0) }) else {
            return bytes[bytes.startIndex..<bytes.startIndex]
        }
        return bytes[first...last]
    }

    /// The text of header bytes: UTF-8, else Latin-1 (one character per byte, as HTTP's obsolete text was).
    static func text(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        String(validating: bytes, as: UTF8.self) ?? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}

/// What a server answered: the status, the headers of the final response, and what the body cost.
package struct HTTPResponse: Sendable {
    /// The HTTP status code.
    package var status: Int
    /// The status line's protocol and reason as received (`HTTP/1.1 200 OK`).
    package var statusLine: String
    /// The headers, in the order received.
    package var headers: [HTTPHeader]
    /// For a redirect, its `Location` resolved against the request's URL.
    package var redirectURL: String?
    /// The address the connection went to, and its port.
    package var address: String
    package var port: Int
    /// Body bytes as they arrived (before any Content-Encoding was decoded).
    package var transferredBytes: Int64
    /// Body bytes handed to the receiver (decoded).
    package var decodedBytes: Int64
    /// The final response's status line and header lines as received, each ended by CRLF, with the blank line.
    package var rawHeader: Data
    /// The request's header as sent (`HTTPRequest.keepsRequestHeader`); empty otherwise.
    package var requestHeader: Data

    /// A response as another tool recorded it (a WARC file's record), for the same checks a fetched one gets.
    package init(status: Int, statusLine: String, headers: [HTTPHeader], redirectURL: String? = nil, address: String = "", port: Int = 0,
                transferredBytes: Int64, decodedBytes: Int64, rawHeader: Data = Data(), requestHeader: Data = Data()) {
        self.status = status
        self.statusLine = statusLine
        self.headers = headers
        self.redirectURL = redirectURL
        self.address = address
        self.port = port
        self.transferredBytes = transferredBytes
        self.decodedBytes = decodedBytes
        self.rawHeader = rawHeader
        self.requestHeader = requestHeader
    }

    /// The value of the first header named `name` (case-insensitive).
    package func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// Why a transfer stopped before its response was complete.
package struct HTTPTransferError: Error, CustomStringConvertible, Sendable {
    /// The kinds of failure the fetch layer tells apart (a retry is worth it for some, not for others).
    package enum Kind: Sendable, Equatable {
        /// The time limit passed, or the body stalled.
        case timedOut
        /// The host could not be resolved or reached, or the connection was reset or cut short.
        case connection
        /// The body grew past a size limit (`maxTransferredBytes` or `maxDecodedBytes`).
        case tooLarge
        /// The connection would have gone to a non-public address (`refuseNonPublicAddresses`).
        case nonPublicAddress
        /// The receiver refused the body (it could not store it).
        case refusedByReceiver
        /// TLS or the encoding failed, or libcurl refused the request.
        case other
    }

    package var kind: Kind
    /// libcurl's message, with the limit or address that stopped the transfer when it was one of Kiln's.
    package var message: String

    package var description: String { message }
}

/// A response body on its way to disk: written to a new file straight from libcurl's buffers (`HTTPClient.get(_:into:)`),
/// its SHA-256 computed as it goes, with no copy of a chunk. Also takes `Data` (an archive's records, an imported
/// body). Not `Sendable`: one thread writes one file.
package final class HTTPBodyFile {
    private let descriptor: Int32
    private let hasher = SHA256Digest()
    /// True when the body is a file without a name (`FileCalls.openUnnamed`): it gets one only from `link(as:)`, and
    /// a body that is not kept leaves nothing behind to remove.
    package let isUnnamed: Bool
    /// The bytes written so far.
    package private(set) var bytes: Int64 = 0
    /// Why a write failed, once one did.
    package private(set) var failure: String?
    private var closed = false

    private init(descriptor: Int32, isUnnamed: Bool) {
        self.descriptor = descriptor
        self.isUnnamed = isUnnamed
    }

    /// Creates the file at `url` (removing what was there: a temporary file of this process's own naming).
    /// - Throws: `LibraryFailure` naming the file when it cannot be created.
    package convenience init(_ url: URL) throws {
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
        var opened = FileCalls.open(url.path, flags, mode: 0o644)
        // Only when the name is taken (an earlier hop's body): one call on the folder fewer for every other body.
        if opened < 0, errno == EEXIST, FileCalls.unlink(url.path) { opened = FileCalls.open(url.path, flags, mode: 0o644) }
        guard opened >= 0 else { throw LibraryFailure("cannot create \(url.path): \(SystemError.lastMessage)") }
        self.init(descriptor: opened, isUnnamed: false)
    }

    /// A file without a name in `folder`, or the file at `named` where the file system cannot make one: no entry in
    /// the folder until the body is kept (`link(as:)`), and none to remove when it is not.
    /// - Throws: `LibraryFailure` naming the file when neither can be created.
    package convenience init(unnamedIn folder: URL, orAt named: URL) throws {
        let opened = FileCalls.openUnnamed(in: folder.path)
        if opened >= 0 {
            self.init(descriptor: opened, isUnnamed: true)
        } else {
            try self.init(named)
        }
    }

    /// True when the unnamed body got the name `path`; false with `errno` set (`EEXIST` when the name is taken), or
    /// for a named body.
    package func link(as path: String) -> Bool {
        isUnnamed && !closed && FileCalls.link(descriptor: descriptor, as: path)
    }

    /// Starts writing the body to disk without waiting (`DescriptorSync.startWriteback`), while it is open.
    package func startWriteback() {
        if !closed { _ = DescriptorSync.startWriteback(descriptor) }
    }

    deinit { close() }

    /// Writes `data`; false once a write failed.
    package func append(_ data: Data) -> Bool {
        data.withUnsafeBytes { append($0) }
    }

    func append(_ buffer: UnsafeRawBufferPointer) -> Bool {
        guard failure == nil, !closed else { return false }
        do {
            try DescriptorWrite.write(buffer, to: descriptor)
        } catch {
            failure = "cannot write the body to disk: \(error.message)"
            return false
        }
        hasher.update(buffer)
        bytes += Int64(buffer.count)
        return true
    }

    /// Closes the file (again: nothing); an unnamed body not linked is gone.
    package func close() {
        guard !closed else { return }
        closed = true
        FileCalls.close(descriptor)
    }

    /// The SHA-256 of everything written, as lowercase hexadecimal.
    package var digest: String { hasher.hexDigest() }
}

/// One libcurl easy handle, reused request after request (its connections stay open for the next one to the same
/// host). Not `Sendable`: one thread uses a client at a time; each fetch worker has its own.
package final class HTTPClient {
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>

    private static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    /// A client with no connection open yet.
    /// - Throws: `HTTPTransferError` when libcurl cannot start.
    package init() throws {
        guard HTTPClient.initialized, let made = curl_easy_init() else {
            throw HTTPTransferError(kind: .other, message: "libcurl could not start")
        }
        handle = made
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Sends `request` and hands each chunk of a 2xx body to `receive` with the status (decoded when
    /// `request.decode`); the body of any other status is read and dropped. `receive` returns false to stop the
    /// transfer. `head` is told the status and headers of a 2xx response once, before its first chunk.
    /// - Throws: `HTTPTransferError` when the transfer stops before the response is complete.
    package func get(_ request: HTTPRequest, head: ((_ status: Int, _ headers: [HTTPHeader]) -> Void)? = nil,
                     receive: (_ status: Int, _ chunk: Data) -> Bool) throws -> HTTPResponse {
        try perform(request, head: head, receive: receive, into: nil)
    }

    /// Sends `request` and writes a 2xx body (decoded when `request.decode`) to `file` straight from libcurl's buffers;
    /// the body of any other status is read and dropped. A write that fails stops the transfer (`refusedByReceiver`,
    /// `file.failure` says why).
    /// - Throws: `HTTPTransferError` when the transfer stops before the response is complete.
    package func get(_ request: HTTPRequest, into file: HTTPBodyFile) throws -> HTTPResponse {
        try perform(request, head: nil, receive: { _, _ in true }, into: file)
    }

    private func perform(_ request: HTTPRequest, head: ((Int, [HTTPHeader]) -> Void)?, receive: (_ status: Int, _ chunk: Data) -> Bool,
                         into file: HTTPBodyFile?) throws -> HTTPResponse {
        curl_easy_reset(handle)
        errorBuffer[0] = 0
        return try withoutActuallyEscaping(receive) { receive in
            let state = TransferState(request: request, receive: receive)
            state.file = file
            state.head = head
            let context = Unmanaged.passUnretained(state).toOpaque()
            var headerList: UnsafeMutablePointer<curl_slist>?
            defer { curl_slist_free_all(headerList) }
            for header in request.headers { headerList = curl_slist_append(headerList, header) }
            state.handle = handle
            var failed = false
            func set(_ code: CURLcode) { if code != CURLE_OK { failed = true } }
            set(kiln_curl_set_string(handle, CURLOPT_URL, request.url))
            set(kiln_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
            set(kiln_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0))
            set(kiln_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
            set(kiln_curl_set_string(handle, CURLOPT_USERAGENT, request.userAgent))
            set(kiln_curl_set_list(handle, CURLOPT_HTTPHEADER, headerList))
            set(kiln_curl_set_long(handle, CURLOPT_TIMEOUT_MS, max(1, Int(request.timeout * 1000))))
            set(kiln_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(request.connectTimeout * 1000))))
            set(kiln_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1))
            set(kiln_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, request.stallSeconds)))
            if request.decode {
                set(kiln_curl_set_string(handle, CURLOPT_ACCEPT_ENCODING, ""))
            } else {
                set(kiln_curl_set_long(handle, CURLOPT_HTTP_CONTENT_DECODING, 0))
            }
            // Larger reads than libcurl's 16 KiB: fewer calls into the receiver per body.
            set(kiln_curl_set_long(handle, CURLOPT_BUFFERSIZE, 256 * 1024))
            set(kiln_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
            set(kiln_curl_set_data_callback(handle, CURLOPT_WRITEFUNCTION, transferBody))
            set(kiln_curl_set_pointer(handle, CURLOPT_WRITEDATA, context))
            set(kiln_curl_set_data_callback(handle, CURLOPT_HEADERFUNCTION, transferHeader))
            set(kiln_curl_set_pointer(handle, CURLOPT_HEADERDATA, context))
            set(kiln_curl_set_long(handle, CURLOPT_NOPROGRESS, 0))
            set(kiln_curl_set_progress_callback(handle, transferProgress))
            set(kiln_curl_set_pointer(handle, CURLOPT_XFERINFODATA, context))
            set(kiln_curl_set_prereq_callback(handle, transferPrerequest))
            set(kiln_curl_set_pointer(handle, CURLOPT_PREREQDATA, context))
            if request.keepsRequestHeader {
                // libcurl reports the header it sent only to a debug callback, and calls that only when verbose.
                set(kiln_curl_set_debug_callback(handle, transferDebug))
                set(kiln_curl_set_pointer(handle, CURLOPT_DEBUGDATA, context))
                set(kiln_curl_set_long(handle, CURLOPT_VERBOSE, 1))
            }
            if failed { throw HTTPTransferError(kind: .other, message: "libcurl refused the request's options for \(request.url)") }
            let code = curl_easy_perform(handle)
            state.handle = nil
            if let stop = state.stop { throw stop }
            guard code == CURLE_OK else { throw failure(code) }
            var status = 0
            _ = kiln_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
            var transferred: curl_off_t = 0
            _ = kiln_curl_get_offset(handle, CURLINFO_SIZE_DOWNLOAD_T, &transferred)
            var port = 0
            _ = kiln_curl_get_long(handle, CURLINFO_PRIMARY_PORT, &port)
            return HTTPResponse(status: status, statusLine: state.statusLine, headers: state.headers,
                                redirectURL: info(CURLINFO_REDIRECT_URL), address: info(CURLINFO_PRIMARY_IP) ?? "", port: port,
                                transferredBytes: Int64(transferred), decodedBytes: state.decoded,
                                rawHeader: state.rawHeader, requestHeader: state.requestHeader)
        }
    }

    private func info(_ key: CURLINFO) -> String? {
        var text: UnsafeMutablePointer<CChar>?
        guard kiln_curl_get_string(handle, key, &text) == CURLE_OK, let text else { return nil }
        return String(cString: text)
    }

    private func failure(_ code: CURLcode) -> HTTPTransferError {
        let detail = String(cString: errorBuffer)
        let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_OPERATION_TIMEDOUT: return HTTPTransferError(kind: .timedOut, message: message)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING,
             CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return HTTPTransferError(kind: .connection, message: message)
        case CURLE_FILESIZE_EXCEEDED: return HTTPTransferError(kind: .tooLarge, message: message)
        default: return HTTPTransferError(kind: .other, message: message)
        }
    }

    /// The classifier every fetch uses: `isNonPublic` of the address, whatever the port.
    package static let standardClassifier: AddressClassifier = { address, _ in isNonPublic(address) }

    /// Whether `address` (an IPv4 or IPv6 address as text) is one a public host may not redirect to: any address the
    /// IANA special-purpose registries (RFC 6890 and its updates) do not mark globally reachable — loopback, private,
    /// shared, link-local, documentation, benchmarking, reserved, unspecified — and multicast.
    package static func isNonPublic(_ address: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            let value = UInt32(bigEndian: v4.s_addr)
            let a = value >> 24, b = (value >> 16) & 0xFF, c = (value >> 8) & 0xFF, d = value & 0xFF
            if a == 192 && b == 0 && c == 0 { return d != 9 && d != 10 }
            return a == 0 || a == 10 || a == 127 || (a == 169 && b == 254) || (a == 172 && (16...31).contains(b))
                || (a == 192 && b == 168) || (a == 100 && (64...127).contains(b)) || (a == 192 && b == 0 && c == 2)
                || (a == 198 && (18...19).contains(b)) || (a == 198 && b == 51 && c == 100) || (a == 203 && b == 0 && c == 113) || a >= 224
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return true }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return isNonPublic(bytes[12..<16].map(String.init).joined(separator: "."))
        }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) { return true }
        let documentation = bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0x0D && bytes[3] == 0xB8
        let ietf = bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] < 0x02
        let discard = bytes[0] == 0x01 && bytes[1...7].allSatisfy { $0 == 0 }
        return bytes[0] == 0xFF || (bytes[0] & 0xFE) == 0xFC || (bytes[0] == 0xFE && (bytes[1] & 0xC0) == 0x80) || documentation || ietf || discard
    }
}

/// What libcurl's callbacks share during one transfer.
private final class TransferState {
    let request: HTTPRequest
    let receive: (Int, Data) -> Bool
    var handle: UnsafeMutableRawPointer?
    /// Where a 2xx body goes instead of `receive`, when the caller gave a file.
    var file: HTTPBodyFile?
    /// Told the status and headers before the first chunk of a 2xx body (`nil` once told).
    var head: ((Int, [HTTPHeader]) -> Void)?
    var headers: [HTTPHeader] = []
    var statusLine = ""
    var rawHeader = Data()
    var requestHeader = Data()
    var decoded: Int64 = 0
    var stop: HTTPTransferError?

    init(request: HTTPRequest, receive: @escaping (Int, Data) -> Bool) {
        self.request = request
        self.receive = receive
    }

    var status: Int {
        var status = 0
        if let handle { _ = kiln_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status) }
        return status
    }
}

private func transferBody(_ bytes: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    guard let context else { return 0 }
    let state = Unmanaged<TransferState>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    state.decoded += Int64(length)
    if state.decoded > state.request.maxDecodedBytes {
        state.stop = HTTPTransferError(kind: .tooLarge, message: "the body is larger than \(state.request.maxDecodedBytes) bytes once decoded")
        return 0
    }
    let status = state.status
    guard (200..<300).contains(status), length > 0, let bytes else { return length }
    if let head = state.head {
        state.head = nil
        head(status, state.headers)
    }
    if let file = state.file {
        guard file.append(UnsafeRawBufferPointer(start: bytes, count: length)) else {
            state.stop = state.stop ?? HTTPTransferError(kind: .refusedByReceiver, message: file.failure ?? "the body could not be stored")
            return 0
        }
        return length
    }
    guard state.receive(status, Data(bytes: bytes, count: length)) else {
        state.stop = state.stop ?? HTTPTransferError(kind: .refusedByReceiver, message: "the body could not be stored")
        return 0
    }
    return length
}

private func transferHeader(_ bytes: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?) -> Int {
    let length = size * count
    guard let context, let bytes else { return length }
    let state = Unmanaged<TransferState>.fromOpaque(context).takeUnretainedValue()
    let raw = UnsafeRawBufferPointer(start: bytes, count: length)
    let line = HTTPHeader.trimmed(raw[...])
    if line.starts(with: "HTTP/".utf8) {
        // A new response (after a 100 Continue, say): only the last one's headers count.
        state.headers = []
        state.statusLine = HTTPHeader.text(line)
        state.rawHeader = Data()
    } else if let header = HTTPHeader.field(in: line) {
        state.headers.append(header)
    }
    state.rawHeader.append(contentsOf: raw)
    return length
}

private func transferDebug(_ handle: UnsafeMutableRawPointer?, _ type: curl_infotype, _ bytes: UnsafeMutablePointer<CChar>?, _ size: Int,
                           _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard type == CURLINFO_HEADER_OUT, let context, let bytes else { return 0 }
    let state = Unmanaged<TransferState>.fromOpaque(context).takeUnretainedValue()
    // One call per request sent; a redirect is not followed here, so the last is this request's.
    state.requestHeader = Data(bytes: bytes, count: size)
    return 0
}

private func transferProgress(_ context: UnsafeMutableRawPointer?, _ downloadTotal: curl_off_t, _ downloadNow: curl_off_t,
                              _ uploadTotal: curl_off_t, _ uploadNow: curl_off_t) -> Int32 {
    guard let context else { return 0 }
    let state = Unmanaged<TransferState>.fromOpaque(context).takeUnretainedValue()
    let limit = state.request.maxTransferredBytes
    if Int64(downloadTotal) > limit || Int64(downloadNow) > limit {
        state.stop = HTTPTransferError(kind: .tooLarge, message: "the body is larger than \(limit) bytes")
        return 1
    }
    return 0
}

private func transferPrerequest(_ context: UnsafeMutableRawPointer?, _ address: UnsafeMutablePointer<CChar>?, _ local: UnsafeMutablePointer<CChar>?,
                                _ port: Int32, _ localPort: Int32) -> Int32 {
    guard let context, let address else { return CURL_PREREQFUNC_OK }
    let state = Unmanaged<TransferState>.fromOpaque(context).takeUnretainedValue()
    let text = String(cString: address)
    if state.request.refuseNonPublicAddresses, state.request.isNonPublic(text, Int(port)) {
        state.stop = HTTPTransferError(kind: .nonPublicAddress, message: "the connection would go to the non-public address \(text)")
        return CURL_PREREQFUNC_ABORT
    }
    return CURL_PREREQFUNC_OK
}
