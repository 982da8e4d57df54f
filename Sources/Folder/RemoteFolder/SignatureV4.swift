import Crypto
import Foundation
import JSONDocument

/// AWS Signature Version 4 for S3 requests (Spec/remote.md 11.3), written from AWS's published
/// description of the algorithm: a canonical request, the string to sign, a signing key derived
/// by an HMAC-SHA256 chain over the date, region and service, and the signature over the string.
/// By hand because no package in the local mirror signs requests without also bringing an HTTP
/// stack of its own; the published worked examples are the tests.
struct SignatureV4: Sendable {
    var accessKey: String
    var secretKey: String
    /// A temporary credential's token, sent as `x-amz-security-token` and signed.
    var sessionToken: String?
    var region: String
    var service: String

    init(accessKey: String, secretKey: String, sessionToken: String? = nil, region: String, service: String = "s3") {
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.sessionToken = sessionToken
        self.region = region
        self.service = service
    }

    /// The SHA-256 of an empty body, as lowercase hex: what a GET signs as its payload.
    static let emptyPayloadHash = sha256Hex("")

    /// The headers to add to a request so that it is signed: `x-amz-date`,
    /// `x-amz-content-sha256` (S3 only), `x-amz-security-token` (with a session token) and
    /// `Authorization`. `headers` are the request's other headers to sign, `host` among them.
    func signedHeaders(
        method: String, path: String, query: [(String, String)], headers: [(String, String)], payloadHash: String = emptyPayloadHash, date: Date
    ) -> [(String, String)] {
        let stamp = Self.timestamp(date)
        var added: [(String, String)] = [("x-amz-date", stamp)]
        if service == "s3" { added.append(("x-amz-content-sha256", payloadHash)) }
        if let sessionToken { added.append(("x-amz-security-token", sessionToken)) }
        let all = headers + added
        let (signed, signature) = sign(method: method, path: path, query: query, headers: all, payloadHash: payloadHash, timestamp: stamp)
        let scope = "\(stamp.prefix(8))/\(region)/\(service)/aws4_request"
        return added + [("Authorization", "AWS4-HMAC-SHA256 Credential=\(accessKey)/\(scope),SignedHeaders=\(signed),Signature=\(signature)")]
    }

    /// The signed header list and the signature of a request whose headers (`x-amz-date`
    /// among them) are all given.
    func sign(
        method: String, path: String, query: [(String, String)], headers: [(String, String)], payloadHash: String, timestamp: String
    ) -> (signedHeaders: String, signature: String) {
        let canonical = Self.canonicalRequest(method: method, path: path, query: query, headers: headers, payloadHash: payloadHash)
        let scope = "\(timestamp.prefix(8))/\(region)/\(service)/aws4_request"
        let toSign = "AWS4-HMAC-SHA256\n\(timestamp)\n\(scope)\n\(Self.sha256Hex(canonical.request))"
        var key = SymmetricKey(data: Array("AWS4\(secretKey)".utf8))
        for part in [String(timestamp.prefix(8)), region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        let signature = lowercaseHex(HMAC<SHA256>.authenticationCode(for: Array(toSign.utf8), using: key))
        return (canonical.signedHeaders, signature)
    }

    /// The canonical request and its signed-header list: the method; the path with every
    /// segment URI-encoded (S3 paths are encoded once); the query sorted by encoded name, then
    /// value; each header's lowercase name and trimmed value, sorted by name; the names; the
    /// payload's hash.
    static func canonicalRequest(
        method: String, path: String, query: [(String, String)], headers: [(String, String)], payloadHash: String
    ) -> (request: String, signedHeaders: String) {
        let canonicalPath =
            path.isEmpty ? "/" : path.split(separator: "/", omittingEmptySubsequences: false).map { uriEncode(String($0)) }.joined(separator: "/")
        let canonicalQuery = query.map { (uriEncode($0.0), uriEncode($0.1)) }
            .sorted { $0.0 != $1.0 ? $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) : $0.1.utf8.lexicographicallyPrecedes($1.1.utf8) }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        var byName: [String: [String]] = [:]
        for (name, value) in headers {
            let trimmed = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
            byName[name.lowercased(), default: []].append(trimmed)
        }
        let names = byName.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let canonicalHeaders = names.map { "\($0):\(byName[$0, default: []].joined(separator: ","))\n" }.joined()
        let signed = names.joined(separator: ";")
        return ([method, canonicalPath, canonicalQuery, canonicalHeaders, signed, payloadHash].joined(separator: "\n"), signed)
    }

    /// Percent-encoding of every byte but the unreserved `A-Z a-z 0-9 - . _ ~`, in uppercase hex.
    static func uriEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// `YYYYMMDD'T'HHMMSS'Z'` in UTC.
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0, parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
    }

    /// The SHA-256 of a text's UTF-8 bytes, as lowercase hex.
    static func sha256Hex(_ text: String) -> String { lowercaseHex(SHA256.hash(data: Array(text.utf8))) }

}
