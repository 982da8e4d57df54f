import Foundation
import JSONDocument

extension FormatError.Code {
    /// A URL the toolkit cannot read: an unknown scheme, a protocol not given, credentials,
    /// a query or a fragment in it (Spec/remote.md 2).
    package static let remoteBadURL = Self("remote.bad-url")
}

/// A remote folder given as a URL (Spec/remote.md 2): `webdav://HOST/PATH` or
/// `webdavs://HOST/PATH`, or `http(s)://HOST/PATH` with `--protocol webdav` or
/// `--protocol ensembles-server` (Spec/remote.md 11). Only read.
package struct RemoteLocation: Sendable, Equatable {
    /// The protocols a remote folder is read with (Spec/remote.md 2).
    package enum Service: String, Sendable, CaseIterable {
        case webdav
        /// Ensembles Server's JSON protocol; the URL's path is the folder in the user's cloud
        /// tree and the endpoints lie at the URL's origin (Spec/remote.md 11.1).
        case ensemblesServer = "ensembles-server"
    }

    /// The folder's collection as an `http` or `https` URL, its path ending in `/`.
    package let collection: URL
    /// The URL as the user gave it (it holds no credentials: those are refused), for output.
    package let display: String
    /// The protocol it is read with (`--protocol`).
    package let service: Service

    /// True when `argument` names a remote folder rather than a local path: it starts with a
    /// URL scheme followed by `://` (a local path with `://` in it is written `./…`).
    package static func isRemote(_ argument: String) -> Bool {
        guard let range = argument.range(of: "://") else { return false }
        let scheme = argument[argument.startIndex..<range.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    /// Parses `argument`; `protocolName` is the `--protocol` value, needed for `http(s)://`.
    package init(_ argument: String, protocolName: String?) throws(FormatError) {
        // Errors never repeat the argument: it might hold credentials (Spec/remote.md 7).
        func bad(_ why: String) -> FormatError { FormatError(.remoteBadURL, why, location: .init(file: "URL")) }
        guard let components = URLComponents(string: argument), let scheme = components.scheme?.lowercased(), let host = components.host,
            !host.isEmpty
        else { throw bad("the URL cannot be read as scheme://host/path") }
        if components.user != nil || components.password != nil {
            throw bad("a URL must not hold credentials; give them in --remote-password-file or LOGTOOL_REMOTE_PASSWORD (Spec/remote.md 7)")
        }
        if components.query != nil || components.fragment != nil { throw bad("a folder's URL has no query or fragment") }
        let chosen = try protocolName.map { name throws(FormatError) -> Service in
            guard let value = Service(rawValue: name) else { throw bad("unknown --protocol; known: webdav, ensembles-server") }
            return value
        }
        let httpScheme: String
        switch scheme {
        case "webdav", "webdavs":
            if let chosen, chosen != .webdav {
                throw bad("a webdav:// or webdavs:// URL is read with WebDAV only; give http(s):// for --protocol \(chosen.rawValue)")
            }
            httpScheme = scheme == "webdav" ? "http" : "https"
        case "http", "https":
            guard chosen != nil else { throw bad("an http(s) URL needs --protocol webdav or --protocol ensembles-server") }
            httpScheme = scheme
        default: throw bad("unknown URL scheme; known: webdav://, webdavs://, and http(s):// with --protocol webdav or ensembles-server")
        }
        var http = URLComponents()
        http.scheme = httpScheme
        http.host = host
        http.port = components.port
        var path = components.percentEncodedPath
        if path.isEmpty { path = "/" }
        if !path.hasSuffix("/") { path += "/" }
        http.percentEncodedPath = path
        guard let url = http.url else { throw bad("the URL cannot be read as scheme://host/path") }
        collection = url
        display = argument
        service = chosen ?? .webdav
    }

    /// The path segments of the collection, percent-decoded.
    var segments: [String] { Self.decodedSegments(collection.path(percentEncoded: true)) ?? [] }

    /// `path` (percent-encoded) as its decoded segments, empty ones dropped; nil when one cannot
    /// be decoded.
    static func decodedSegments(_ path: String) -> [String]? {
        var result: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            guard let decoded = String(part).removingPercentEncoding else { return nil }
            result.append(decoded)
        }
        return result
    }

    /// The URL of `relative` (decoded segments) under the collection; a folder's ends in `/`.
    func url(of relative: [String], isFolder: Bool) -> URL {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/;?#")
        var path = collection.path(percentEncoded: true)
        path += relative.map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0 }.joined(separator: "/")
        if isFolder && !relative.isEmpty { path += "/" }
        var components = URLComponents(url: collection, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.percentEncodedPath = path
        return components.url ?? collection
    }

    /// True when `url` is on the collection's scheme, host and port (a redirect elsewhere is
    /// refused, Spec/remote.md 6).
    func isSameOrigin(_ url: URL) -> Bool {
        url.scheme?.lowercased() == collection.scheme?.lowercased() && url.host?.lowercased() == collection.host?.lowercased()
            && (url.port ?? Self.defaultPort(url.scheme)) == (collection.port ?? Self.defaultPort(collection.scheme))
    }

    private static func defaultPort(_ scheme: String?) -> Int { scheme?.lowercased() == "https" ? 443 : 80 }
}
