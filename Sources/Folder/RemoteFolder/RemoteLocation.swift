import Foundation
import JSONDocument

extension FormatError.Code {
    /// A URL the toolkit cannot read: an unknown scheme, a protocol not given, credentials,
    /// a query or a fragment in it (Spec/remote.md 2).
    package static let remoteBadURL = Self("remote.bad-url")
}

/// A remote folder given as a URL (Spec/remote.md 2): `webdav://HOST/PATH` or
/// `webdavs://HOST/PATH`, or `http(s)://HOST/PATH` with `--protocol webdav` or
/// `--protocol ensembles-server` (remote.md 12); or `s3://BUCKET/PREFIX` (remote.md 11.1). Only
/// read.
package struct RemoteLocation: Sendable, Equatable {
    /// The protocols a remote folder is read with (Spec/remote.md 2).
    package enum Service: String, Sendable, CaseIterable {
        case webdav
        case s3
        /// Ensembles Server's JSON protocol; the URL's path is the folder in the user's cloud
        /// tree and the endpoints lie at the URL's origin (Spec/remote.md 12.1).
        case ensemblesServer = "ensembles-server"
    }

    /// An S3 folder: a bucket, the prefix of its keys, and the region requests are signed for
    /// (Spec/remote.md 11.1, 11.2).
    package struct S3Folder: Sendable, Equatable {
        package var bucket: String
        /// Empty (the whole bucket) or ending in `/`, taken literally as the AWS CLI does.
        package var prefix: String
        package var region: String
    }

    /// For WebDAV the folder's collection as an `http` or `https` URL, its path ending in `/`;
    /// for S3 the bucket's URL (path-style or virtual-hosted, remote.md 11.2), ending in `/`.
    package let collection: URL
    /// The URL as the user gave it (it holds no credentials: those are refused), for output.
    package let display: String
    /// The protocol it is read with (`--protocol`).
    package let service: Service
    /// The bucket, prefix and region of an `s3://` URL; nil for WebDAV.
    package let s3: S3Folder?

    /// The name the folder is known by: the URL's last segment (the bucket's name for a
    /// whole bucket), empty for a server's root.
    package var folderName: String {
        guard let s3 else { return collection.lastPathComponent == "/" ? "" : collection.lastPathComponent }
        return s3.prefix.split(separator: "/").last.map(String.init) ?? s3.bucket
    }

    /// True when `argument` names a remote folder rather than a local path: it starts with a
    /// URL scheme followed by `://` (a local path with `://` in it is written `./…`).
    package static func isRemote(_ argument: String) -> Bool {
        guard let range = argument.range(of: "://") else { return false }
        let scheme = argument[argument.startIndex..<range.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    /// Parses `argument`; `protocolName` is the `--protocol` value, needed for `http(s)://`;
    /// `endpointURL` and `region` are `--endpoint-url` and `--region`, for `s3://` only (the
    /// region as the AWS tools choose it when `--region` is not given, remote.md 11.2).
    package init(_ argument: String, protocolName: String?, endpointURL: String? = nil, region: String? = nil) throws(FormatError) {
        // Errors never repeat the argument: it might hold credentials (Spec/remote.md 7).
        func bad(_ why: String) -> FormatError { FormatError(.remoteBadURL, why, location: .init(file: "URL")) }
        if argument.lowercased().hasPrefix("s3://") {
            guard protocolName == nil || protocolName == "s3" else { throw bad("an s3:// URL is read with S3; --protocol does not apply") }
            let (bucketURL, folder) = try Self.parseS3(argument, endpointURL: endpointURL, region: region)
            collection = bucketURL
            s3 = folder
            display = argument
            service = .s3
            return
        }
        if endpointURL != nil || region != nil { throw bad("--endpoint-url and --region are for s3:// URLs") }
        s3 = nil
        guard let components = URLComponents(string: argument), let scheme = components.scheme?.lowercased(), let host = components.host,
            !host.isEmpty
        else { throw bad("the URL cannot be read as scheme://host/path") }
        if components.user != nil || components.password != nil {
            throw bad("a URL must not hold credentials; give them in --remote-password-file or LOGTOOL_REMOTE_PASSWORD (Spec/remote.md 7)")
        }
        if components.query != nil || components.fragment != nil { throw bad("a folder's URL has no query or fragment") }
        let chosen = try protocolName.map { name throws(FormatError) -> Service in
            guard let value = Service(rawValue: name), value != .s3 else {
                throw bad("unknown --protocol for an http(s) URL; known: webdav, ensembles-server")
            }
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
        default: throw bad("unknown URL scheme; known: webdav://, webdavs://, s3://, and http(s):// with --protocol webdav or ensembles-server")
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

    /// The bucket's URL and the folder of `s3://BUCKET[/PREFIX]` (Spec/remote.md 11.1, 11.2).
    private static func parseS3(_ argument: String, endpointURL: String?, region: String?) throws(FormatError) -> (URL, S3Folder) {
        func bad(_ why: String) -> FormatError { FormatError(.remoteBadURL, why, location: .init(file: "URL")) }
        let rest = argument.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        var prefix = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
        // Bucket names: 3 to 63 of lower-case letters, digits, `.` and `-`; older buckets in
        // us-east-1 may also hold upper-case letters and `_`, so those are let through.
        guard (1...255).contains(bucket.utf8.count), bucket.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-_".contains($0)) }) else {
            throw bad("an s3:// URL starts with a bucket name (letters, digits, ., - and _)")
        }
        let segments = prefix.split(separator: "/", omittingEmptySubsequences: true)
        // A `.` or `..` segment would be resolved away by the HTTP client: another key than the
        // one meant would be asked for.
        guard !segments.contains(where: { $0 == "." || $0 == ".." }), !prefix.utf8.contains(0) else {
            throw bad("an S3 prefix with a . or .. segment or a NUL cannot be read")
        }
        // Trailing slashes end the folder's name, as for a local folder (`cloud/E//`): one is kept.
        while prefix.hasSuffix("/") { prefix.removeLast() }
        if !prefix.isEmpty { prefix += "/" }
        let region = region ?? "us-east-1"
        guard (1...64).contains(region.count), region.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-") }) else {
            throw bad("--region is a region name such as eu-west-1")
        }
        var http = URLComponents()
        if let endpointURL {
            // Path-style against an endpoint: S3-compatible stores on an address or a name
            // without per-bucket DNS answer it (remote.md 11.2).
            guard let endpoint = URLComponents(string: endpointURL), let scheme = endpoint.scheme?.lowercased(), ["http", "https"].contains(scheme),
                let host = endpoint.host, !host.isEmpty
            else { throw bad("--endpoint-url is an http:// or https:// URL") }
            guard endpoint.user == nil, endpoint.password == nil, endpoint.query == nil, endpoint.fragment == nil else {
                throw bad("--endpoint-url holds no credentials, query or fragment")
            }
            http.scheme = scheme
            http.host = host
            if let port = endpoint.port, port != (scheme == "https" ? 443 : 80) { http.port = port }
            var path = endpoint.percentEncodedPath
            if !path.hasSuffix("/") { path += "/" }
            http.percentEncodedPath = path + SignatureV4.uriEncode(bucket) + "/"
        } else if bucket.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" }), (3...63).contains(bucket.count) {
            // Virtual-hosted against AWS, as the AWS CLI does for such names: AWS's preferred form.
            http.scheme = "https"
            http.host = "\(bucket).s3.\(region).amazonaws.com"
            http.percentEncodedPath = "/"
        } else {
            // A name with dots (or an old name) is not covered by the wildcard certificate of
            // `*.s3.REGION.amazonaws.com`: path-style, as the AWS CLI does over https.
            http.scheme = "https"
            http.host = "s3.\(region).amazonaws.com"
            http.percentEncodedPath = "/" + SignatureV4.uriEncode(bucket) + "/"
        }
        guard let url = http.url else { throw bad("--endpoint-url cannot be read as scheme://host[:port][/path]") }
        return (url, S3Folder(bucket: bucket, prefix: prefix, region: region))
    }

    /// The URL of an S3 object: the bucket's URL and the key under the prefix, each segment
    /// encoded as Signature Version 4 encodes it (so the path sent is the path signed), or of
    /// the bucket itself with `query` (sorted and encoded the same way).
    func s3URL(key relative: [String]?, query: [(String, String)] = []) -> URL {
        var path = collection.path(percentEncoded: true)
        if let relative, let s3 {
            let key = s3.prefix + relative.joined(separator: "/")
            path += key.split(separator: "/", omittingEmptySubsequences: false).map { SignatureV4.uriEncode(String($0)) }.joined(separator: "/")
        } else if path.count > 1 && path.hasSuffix("/") {
            // The bucket itself, path-style: `/BUCKET`, as the AWS tools send it.
            path.removeLast()
        }
        var components = URLComponents(url: collection, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.percentEncodedPath = path
        if !query.isEmpty {
            components.percentEncodedQuery = query.map { (SignatureV4.uriEncode($0.0), SignatureV4.uriEncode($0.1)) }.sorted { $0.0 < $1.0 }
                .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        }
        return components.url ?? collection
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
        if s3 != nil { return s3URL(key: relative) }
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
