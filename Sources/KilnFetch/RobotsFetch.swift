import Foundation
import KilnC
import KilnCore
import KilnManifest

/// Reads an origin's robots.txt as RFC 9309 says: up to five redirects followed, a 2xx read (its first 512 KiB), a 4xx
/// allowing everything, and a 5xx, a 429 or no answer at all disallowing everything on that host.
enum RobotsFetch {
    /// The rules for `settings.userAgent` in the robots.txt at `robotsURL` (`https://example.org/robots.txt`), and the
    /// status that decided them (0 when the server could not be reached).
    /// Each exchange is archived in `archive` when there is one (`kiln fetch --warc`).
    /// - Parameter nonPublic: when given, a connection to an address it calls non-public is refused (robots.txt of a
    ///   redirect's target, after a public host).
    /// - Throws: the refusal (`HTTPTransferError.Kind.nonPublicAddress`) only, and only with `nonPublic`.
    static func read(_ robotsURL: String, settings: FetchSettings, client: HTTPClient, archive: WARCArchive? = nil,
                     refusing nonPublic: AddressClassifier? = nil) throws(HTTPTransferError) -> (rules: RobotsRules, status: Int) {
        var url = robotsURL
        let agent = RobotsRules.productToken(of: settings.userAgent)
        for _ in 0...5 {
            var body = Data()
            var request = HTTPRequest(url: url, userAgent: settings.userAgent, timeout: settings.timeout, maxBytes: Int64(RobotsRules.maximumBytes) * 4)
            request.maxDecodedBytes = Int64(RobotsRules.maximumBytes) * 4
            request.keepsRequestHeader = archive != nil
            if let nonPublic {
                request.refuseNonPublicAddresses = true
                request.isNonPublic = nonPublic
            }
            let response: HTTPResponse
            do {
                response = try client.get(request) { _, chunk in
                    body.append(chunk.prefix(max(0, RobotsRules.maximumBytes - body.count)))
                    return body.count < RobotsRules.maximumBytes
                }
            } catch let error as HTTPTransferError where error.kind == .refusedByReceiver {
                // The first 512 KiB are read; the rest is not needed.
                return (RobotsRules(parsing: String(decoding: body, as: UTF8.self), agent: agent), 200)
            } catch let error as HTTPTransferError where error.kind == .nonPublicAddress {
                throw error
            } catch {
                return (.disallowAll, 0)
            }
            archive?.archive(target: url, response: response, body: (200...299).contains(response.status) ? .data(body) : .none)
            switch response.status {
            case 200...299:
                return (RobotsRules(parsing: String(decoding: body, as: UTF8.self), agent: agent), response.status)
            case 301, 302, 303, 307, 308:
                guard let next = response.redirectURL, FetchURL.problem(next) == nil else { return (.allowAll, response.status) }
                url = next
            case 429:
                return (.disallowAll, response.status)
            case 400...499:
                return (.allowAll, response.status)
            default:
                return (.disallowAll, response.status)
            }
        }
        // More than five redirects: as if there were no robots.txt (RFC 9309, 2.3.1.2).
        return (.allowAll, 0)
    }
}
