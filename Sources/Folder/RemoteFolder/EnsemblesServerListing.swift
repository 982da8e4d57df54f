import Foundation
import JSONDocument

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FormatError.Code {
    /// Ensembles Server answered `401`: the user name or password is wrong, or none was given
    /// (Spec/remote.md 12.2).
    package static let remoteAuthenticationFailed = Self("remote.authentication-failed")
    /// Ensembles Server answered with success but said it failed (`success` not true), said a
    /// folder does not exist, or returned a download URL the toolkit does not follow
    /// (Spec/remote.md 12.3, 12.4).
    package static let remoteServerError = Self("remote.server-error")
}

/// The Ensembles Server protocol as the 1.x client speaks it (Spec/remote.md 12): JSON posted
/// with HTTP Basic authentication to endpoints at the URL's origin, then a plain GET of each
/// presigned URL the server hands out. Only the four reading endpoints are ever called.
package enum EnsemblesServerProtocol {
    /// The folders whose entries the 1.x client only ever treats as files (its cloud manager's
    /// `stores`, `events`, `baselines` and `data`): their entries need no `fileexists`.
    static let fileFolders: Set<String> = ["stores", "events", "baselines", "data"]
    /// Paths asked in one `downloadurls` request (the client asks one at a time; the endpoint
    /// takes an array).
    static let downloadBatch = 100
    /// The largest text of a server's `error` member repeated in a message.
    static let maximumErrorText = 200
}

extension RemoteSnapshot {
    /// The endpoint `name` at the URL's origin (Spec/remote.md 12.1).
    func endpoint(_ name: String) -> URL {
        var components = URLComponents(url: location.collection, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.percentEncodedPath = "/" + name
        return components.url ?? location.collection
    }

    /// A folder's or file's path in the user's cloud tree as the protocol names it: `/` and the
    /// segments joined by `/` (no final `/`).
    func cloudPath(_ relative: [String]) -> String { "/" + (location.segments + relative).joined(separator: "/") }

    /// Posts `body` (or nothing) to `name` with Basic authentication sent at once, as the 1.x
    /// client does, and returns the answer's JSON object (nil for an empty body). `file` is what
    /// errors name.
    func post(_ name: String, body: JSONValue?, transport: HTTPTransport, file: String) throws(FormatError) -> JSONObject? {
        var headers = ["Content-Type": "application/json", "Accept": "application/json"]
        if let credentials = options.credentials, !credentials.user.isEmpty, !credentials.password.isEmpty {
            headers["Authorization"] = "Basic " + Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
        }
        let data = body.map { Data(JSONWriter().string($0).utf8) }
        let response = try transport.perform(
            .init(method: "POST", url: endpoint(name), headers: headers, body: data, sink: .memory, limit: Self.maximumListingBytes), origin: location,
            file: file)
        if response.status == 401 {
            throw FormatError(
                .remoteAuthenticationFailed,
                "/\(name) answered 401: the user name or password is wrong, or none was given (LOGTOOL_REMOTE_USER, LOGTOOL_REMOTE_PASSWORD or --remote-password-file)",
                location: .init(file: file))
        }
        guard (200..<300).contains(response.status) else {
            throw FormatError(.remoteHTTPStatus, "/\(name) answered \(response.status)\(Self.statusHint(response.status))", location: .init(file: file))
        }
        return try EnsemblesServerProtocol.answer(response.body, endpoint: name, file: file)
    }

    /// `fileexists` of `relative`: whether it exists and whether it is a folder.
    private func exists(_ relative: [String], transport: HTTPTransport) throws(FormatError) -> (exists: Bool, isFolder: Bool) {
        let shown = relative.isEmpty ? "." : relative.joined(separator: "/")
        let object = try post(
            "fileexists", body: .object(JSONObject([("path", .string(cloudPath(relative)))])), transport: transport, file: shown)
        return (EnsemblesServerProtocol.flag(object, "exists"), EnsemblesServerProtocol.flag(object, "isdir"))
    }

    /// Every file under the URL's folder (Spec/remote.md 12.3): `login`, `fileexists` of the
    /// folder, then `listdir` of each folder, breadth first. The protocol names entries only:
    /// an entry of `stores`, `events`, `baselines` or `data` is a file, a name ending in `/` a
    /// folder, and any other entry is asked with `fileexists`. Sizes, dates and ETags are not in
    /// the listing: they come from the download. Unsafe names are reported, not listed.
    func listEnsemblesServer(_ transport: HTTPTransport) throws(FormatError) -> ([Entry], [FormatError]) {
        _ = try post("login", body: nil, transport: transport, file: ".")
        if !location.segments.isEmpty {
            let (found, isFolder) = try exists([], transport: transport)
            guard found, isFolder else {
                throw FormatError(
                    .remoteServerError, found ? "the URL names a file, not a folder" : "the folder does not exist on the server", location: .init(file: "."))
            }
        }
        var walk = FolderWalk()
        while let folder = walk.nextFolder() {
            let shown = folder.isEmpty ? "." : folder.joined(separator: "/") + "/"
            let object = try post("listdir", body: .object(JSONObject([("path", .string(cloudPath(folder)))])), transport: transport, file: shown)
            let names = try EnsemblesServerProtocol.listedNames(object, file: shown)
            let entriesAreFiles = EnsemblesServerProtocol.fileFolders.contains((location.segments + folder).last ?? "")
            for (name, markedFolder) in names {
                let path = folder + [name]
                guard try walk.admit(name, in: folder) else { continue }
                var isFolder = markedFolder
                if !isFolder && !entriesAreFiles {
                    let (found, folderFound) = try exists(path, transport: transport)
                    guard found else {
                        walk.report(
                            FormatError(
                                .remoteServerError, "listed, but /fileexists says it does not exist: not fetched",
                                location: .init(file: path.joined(separator: "/"))))
                        continue
                    }
                    isFolder = folderFound
                }
                if isFolder { walk.addFolder(path) } else { walk.addFile(Entry(path: path, size: nil, etag: nil, modified: nil)) }
            }
        }
        return (walk.files, walk.problems)
    }

    /// Asks `downloadurls` for the files of `work`, in batches (Spec/remote.md 12.4), and returns
    /// them with their presigned URLs, and the files whose URL is refused. A URL is used only
    /// when it is absolute `https`, or `http` when the folder's own URL is `http`, and holds no
    /// user name or password.
    func resolveDownloadURLs(_ work: [Entry], transport: HTTPTransport) throws(FormatError) -> ([Entry], [FormatError]) {
        var resolved: [Entry] = []
        var problems: [FormatError] = []
        var start = 0
        while start < work.count {
            let batch = Array(work[start..<min(start + EnsemblesServerProtocol.downloadBatch, work.count)])
            start += batch.count
            let paths = JSONValue.array(batch.map { .string(cloudPath($0.path)) })
            let object = try post("downloadurls", body: .object(JSONObject([("paths", paths)])), transport: transport, file: batch[0].relative)
            guard let urls = object?["urls"]?.arrayValue, urls.count == batch.count else {
                throw FormatError(
                    .remoteMalformedListing, "/downloadurls answered without one URL for each of the \(batch.count) paths asked",
                    location: .init(file: batch[0].relative))
            }
            for (entry, value) in zip(batch, urls) {
                // The URL is never repeated: its query is a signature that grants access.
                guard let url = value.stringValue.flatMap(downloadURL) else {
                    problems.append(
                        FormatError(
                            .remoteServerError,
                            "/downloadurls returned a URL that is not followed (not absolute https, or http from an https server, or holding credentials): not fetched",
                            location: .init(file: entry.relative)))
                    continue
                }
                var withSource = entry
                withSource.source = url
                resolved.append(withSource)
            }
        }
        return (resolved, problems)
    }

    /// `text` as a presigned URL that is followed, or nil: absolute, `https` (or `http` when the
    /// folder's URL is `http`), with a host, without a user name or password (Spec/remote.md
    /// 12.4).
    func downloadURL(_ text: String) -> URL? {
        EnsemblesServerProtocol.downloadURL(text, folderIsHTTP: location.collection.scheme?.lowercased() == "http")
    }
}

extension EnsemblesServerProtocol {
    /// What an endpoint's answer `body` says (Spec/remote.md 12.2): nil for an empty body, which
    /// is success as for the 1.x client; otherwise a JSON object whose `success` is true (or a
    /// non-zero number). `name` is the endpoint and `file` what errors name.
    package static func answer(_ body: Data, endpoint name: String, file: String) throws(FormatError) -> JSONObject? {
        if body.isEmpty { return nil }
        guard let value = try? JSONParser.parse(body), let object = value.objectValue else {
            throw FormatError(.remoteMalformedListing, "/\(name) answered with a body that is not a JSON object", location: .init(file: file))
        }
        guard flag(object, "success") else {
            let said = object["error"]?.stringValue.map { String($0.prefix(maximumErrorText)) } ?? "no reason given"
            throw FormatError(.remoteServerError, "/\(name) answered that it failed: \(said)", location: .init(file: file))
        }
        return object
    }

    /// A flag of an answer (`success`, `exists`, `isdir`): true, or a non-zero number.
    package static func flag(_ object: JSONObject?, _ name: String) -> Bool {
        switch object?[name] {
        case .bool(let value)?: value
        case .number(let number)?: (Double(number.description) ?? 0) != 0
        default: false
        }
    }

    /// The names of a `listdir` answer (Spec/remote.md 12.3), each with whether a final `/`
    /// marked it as a folder (the `/` removed); `file` is what errors name.
    package static func listedNames(_ object: JSONObject?, file: String) throws(FormatError) -> [(name: String, markedFolder: Bool)] {
        guard let names = object?["files"]?.arrayValue else {
            throw FormatError(.remoteMalformedListing, "/listdir answered without a `files` array", location: .init(file: file))
        }
        guard names.count <= RemoteSnapshot.maximumMembersPerFolder else {
            throw FormatError(
                .remoteMalformedListing, "the listing holds more than \(RemoteSnapshot.maximumMembersPerFolder) members, the limit of one folder",
                location: .init(file: file))
        }
        var listed: [(name: String, markedFolder: Bool)] = []
        for value in names {
            guard var name = value.stringValue else {
                throw FormatError(.remoteMalformedListing, "/listdir's `files` holds a member that is not a string", location: .init(file: file))
            }
            // A final `/` marks a folder (an S3 prefix), when a server sends one.
            var markedFolder = false
            if name.count > 1, name.hasSuffix("/") {
                name.removeLast()
                markedFolder = true
            }
            listed.append((name, markedFolder))
        }
        return listed
    }

    /// `text` as a presigned URL that is followed, or nil: absolute, `https` (or `http` when
    /// the folder's URL is `http`), with a host, without a user name or password (Spec/remote.md
    /// 11.4).
    package static func downloadURL(_ text: String, folderIsHTTP: Bool) -> URL? {
        guard let url = URL(string: text), let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty,
            scheme == "https" || (scheme == "http" && folderIsHTTP),
            components.user == nil, components.password == nil
        else { return nil }
        return url
    }
}
