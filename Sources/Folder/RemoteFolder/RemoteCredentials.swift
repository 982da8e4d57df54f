import Crypto
import Foundation
import JSONDocument

/// A user name and password for a remote folder. They come from a file or the environment,
/// never from an argument, and are never written to output, an error or the manifest
/// (Spec/remote.md 7): `description` hides them.
package struct RemoteCredentials: Sendable, CustomStringConvertible {
    package let user: String
    package let password: String

    package init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    package var description: String { "RemoteCredentials(hidden)" }
}

/// Answers a server's `WWW-Authenticate` challenges with Basic (RFC 7617) or Digest (RFC 7616:
/// MD5, MD5-sess, SHA-256, `qop=auth` or none). Nothing is sent before a challenge: a server
/// that does not ask never sees the password. Shared by the requests in flight.
final class Authenticator: @unchecked Sendable {
    private let credentials: RemoteCredentials?
    private let lock = NSLock()
    private var scheme: Challenge?
    private var nonceCount = 0

    struct Challenge: Equatable {
        var name: String
        var parameters: [String: String]
    }

    init(_ credentials: RemoteCredentials?) { self.credentials = credentials }

    var hasCredentials: Bool { credentials != nil }

    /// The `Authorization` header for a request, once a challenge has been accepted.
    func authorization(method: String, url: URL) -> String? {
        guard let credentials else { return nil }
        lock.lock()
        defer { lock.unlock() }
        guard let scheme else { return nil }
        if scheme.name == "basic" {
            return "Basic " + Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
        }
        nonceCount += 1
        return Self.digest(
            scheme.parameters, credentials: credentials, method: method, uri: Self.requestURI(url), nonceCount: nonceCount, cnonce: Self.cnonce())
    }

    /// Takes the challenges of a 401 response; true when a request with new credentials may
    /// succeed (there are credentials, a scheme we speak, and it differs from the one that failed
    /// or says its nonce was stale).
    func accept(challenges header: String) -> Bool {
        guard credentials != nil else { return false }
        let offered = Self.parseChallenges(header)
        let chosen = offered.first { $0.name == "digest" && Self.algorithmKnown($0.parameters["algorithm"]) } ?? offered.first { $0.name == "basic" }
        guard let chosen else { return false }
        lock.lock()
        defer { lock.unlock() }
        let stale = chosen.parameters["stale"]?.lowercased() == "true"
        if let scheme, scheme == chosen, !stale { return false }
        if let scheme, scheme.name == chosen.name, scheme.parameters["nonce"] == chosen.parameters["nonce"], !stale { return false }
        scheme = chosen
        nonceCount = 0
        return true
    }

    static func algorithmKnown(_ name: String?) -> Bool {
        ["md5", "md5-sess", "sha-256", "sha-256-sess"].contains((name ?? "MD5").lowercased())
    }

    /// The path and query of `url` as sent in the request line (the Digest `uri`).
    static func requestURI(_ url: URL) -> String {
        var uri = url.path(percentEncoded: true)
        if uri.isEmpty { uri = "/" }
        if let query = url.query(percentEncoded: true) { uri += "?" + query }
        return uri
    }

    private static func cnonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return lowercaseHex((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// The Digest `Authorization` header (RFC 7616 3.4).
    static func digest(
        _ challenge: [String: String], credentials: RemoteCredentials, method: String, uri: String, nonceCount: Int, cnonce: String
    )
        -> String
    {
        let algorithm = (challenge["algorithm"] ?? "MD5")
        let lower = algorithm.lowercased()
        let hash: (String) -> String = { text in
            lower.hasPrefix("sha-256")
                ? lowercaseHex(SHA256.hash(data: Data(text.utf8)))
                : lowercaseHex(Insecure.MD5.hash(data: Data(text.utf8)))
        }
        let realm = challenge["realm"] ?? ""
        let nonce = challenge["nonce"] ?? ""
        var ha1 = hash("\(credentials.user):\(realm):\(credentials.password)")
        if lower.hasSuffix("-sess") { ha1 = hash("\(ha1):\(nonce):\(cnonce)") }
        let ha2 = hash("\(method):\(uri)")
        let qops = (challenge["qop"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let nc = String(format: "%08x", nonceCount)
        let quote: (String) -> String = { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        var fields = [
            "username=\(quote(credentials.user))", "realm=\(quote(realm))", "nonce=\(quote(nonce))", "uri=\(quote(uri))", "algorithm=\(algorithm)",
        ]
        if qops.contains("auth") {
            fields.append("response=\(quote(hash("\(ha1):\(nonce):\(nc):\(cnonce):auth:\(ha2)")))")
            fields += ["qop=auth", "nc=\(nc)", "cnonce=\(quote(cnonce))"]
        } else {
            fields.append("response=\(quote(hash("\(ha1):\(nonce):\(ha2)")))")
        }
        if let opaque = challenge["opaque"] { fields.append("opaque=\(quote(opaque))") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// The challenges of a `WWW-Authenticate` value (RFC 9110 11.6.1): a scheme name, then
    /// `name=value` or `name="quoted"` parameters separated by commas; several challenges may
    /// share one value. Names are lower-cased.
    static func parseChallenges(_ header: String) -> [Challenge] {
        var challenges: [Challenge] = []
        let characters = Array(header)
        var index = 0
        func skipSpaces() { while index < characters.count, characters[index] == " " || characters[index] == "\t" || characters[index] == "," { index += 1 } }
        func token() -> String {
            var text = ""
            while index < characters.count, !" \t,=".contains(characters[index]) {
                text.append(characters[index])
                index += 1
            }
            return text
        }
        while index < characters.count {
            skipSpaces()
            let name = token()
            guard !name.isEmpty else {
                index += 1
                continue
            }
            // A token followed by `=` is a parameter of the current challenge.
            var lookahead = index
            while lookahead < characters.count, characters[lookahead] == " " { lookahead += 1 }
            if lookahead < characters.count, characters[lookahead] == "=", !challenges.isEmpty {
                index = lookahead + 1
                while index < characters.count, characters[index] == " " { index += 1 }
                var value = ""
                if index < characters.count, characters[index] == "\"" {
                    index += 1
                    while index < characters.count, characters[index] != "\"" {
                        if characters[index] == "\\", index + 1 < characters.count { index += 1 }
                        value.append(characters[index])
                        index += 1
                    }
                    index += 1
                } else {
                    value = token()
                }
                challenges[challenges.count - 1].parameters[name.lowercased()] = value
            } else {
                challenges.append(Challenge(name: name.lowercased(), parameters: [:]))
            }
        }
        return challenges
    }
}
