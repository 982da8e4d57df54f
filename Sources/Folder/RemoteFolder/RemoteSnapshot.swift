import Foundation
import JSONDocument
import TemporaryFiles

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FormatError.Code {
    /// A remote name that the snapshot cannot hold under its own name: `/`, `.`, `..`, NUL,
    /// longer than 255 bytes, a second member of one name, the manifest's name, or an entry
    /// outside the folder asked for; it is not fetched (Spec/remote.md 4).
    package static let remoteUnsafeName = Self("remote.unsafe-name")
    /// `fetch`'s DIR exists and is neither empty nor a snapshot of the same URL (remote.md 4.1).
    package static let remoteDestinationNotSnapshot = Self("remote.destination-not-snapshot")
    /// `repair --apply` (or another command that writes) was given a URL (remote.md 5.2).
    package static let remoteReadOnly = Self("remote.read-only")
}

/// Copies a remote folder into a local folder, keeping every file's bytes and modification
/// time (Spec/remote.md 4). Nothing is written, moved or deleted on the server: the only
/// methods sent are PROPFIND and GET.
package struct RemoteSnapshot: Sendable {
    /// The manifest's name inside the snapshot (Spec/remote.md 4.3).
    package static let manifestName = ".logtool-fetch.json"
    /// At most this many requests are in flight (Spec/remote.md 4.2).
    package static let maximumInFlight = 8
    /// Bounds of a listing (Spec/remote.md 3): one PROPFIND answer, the members of one folder,
    /// the members of the whole tree, and how deep it goes.
    package static let maximumListingBytes: Int64 = 64 << 20
    package static let maximumMembersPerFolder = 200_000
    package static let maximumMembers = 2_000_000
    package static let maximumDepth = 16
    /// The largest file fetched (Spec/README.md 6.2): 1 GiB + 50 bytes for a data file (a
    /// blob container, data-blobs.md 4), 256 MiB for every other file (the JSON and binary
    /// readers' file limit).
    package static let maximumDataFileBytes: Int64 = (1 << 30) + 50
    package static let maximumFileBytes: Int64 = 256 << 20

    package struct Options: Sendable {
        /// Seconds a request may receive nothing; its whole time is 20 times that.
        package var timeout: TimeInterval = 30
        package var credentials: RemoteCredentials?
        /// The AWS credentials an S3 folder's requests are signed with; nil sends them unsigned
        /// (a public bucket, Spec/remote.md 11.6).
        package var s3Credentials: S3Credentials?
        /// Keys asked for in one ListObjectsV2 request (`max-keys`; S3 gives at most 1000).
        package var s3PageSize = 1000
        package init(timeout: TimeInterval = 30, credentials: RemoteCredentials? = nil, s3Credentials: S3Credentials? = nil) {
            self.timeout = timeout
            self.credentials = credentials
            self.s3Credentials = s3Credentials
        }
    }

    /// What a fetch did.
    package struct Report: Sendable {
        /// Files the listing holds (collections not counted).
        package var listed = 0
        /// Files downloaded in this run, and their bytes.
        package var fetched = 0
        package var bytes: Int64 = 0
        /// Files already in the snapshot with the same size and ETag or date.
        package var kept = 0
        /// Files of an earlier fetch that the server no longer has, removed from the snapshot.
        package var removed = 0
        /// Listing requests sent (PROPFIND, or ListObjectsV2 pages).
        package var listingRequests = 0
        /// Names not fetched because they are unsafe, and files that failed.
        package var problems: [FormatError] = []
    }

    /// One file of the listing.
    struct Entry: Sendable {
        var path: [String]
        var size: Int64?
        var etag: String?
        var modified: Date?
        /// Where the bytes are fetched when not at the folder's own URL: an Ensembles Server
        /// presigned URL (Spec/remote.md 12.4). Never printed: it grants access.
        var source: URL?
        var relative: String { path.joined(separator: "/") }
    }

    package let location: RemoteLocation
    package let options: Options

    package init(location: RemoteLocation, options: Options) {
        self.location = location
        self.options = options
    }

    /// Fetches into `directory` (created if missing; its parent must exist): new and changed
    /// files are downloaded, the rest kept. `progress` is called with files done, files to do
    /// and bytes so far. Throws when nothing could be listed; the problems of single files
    /// are in the report.
    package func fetch(into directory: URL, progress: (@Sendable (Int, Int, Int64) -> Void)? = nil) throws(FormatError) -> Report {
        let signer = location.s3.flatMap { folder in
            options.s3Credentials.map {
                SignatureV4(accessKey: $0.accessKeyID, secretKey: $0.secretAccessKey, sessionToken: $0.sessionToken, region: folder.region)
            }
        }
        let transport = HTTPTransport(
            idleTimeout: options.timeout, totalTimeout: options.timeout * 20, credentials: options.credentials, signer: signer,
            displayName: location.display)
        let previous = try prepare(directory)
        removePartialFiles(in: directory)
        var report = Report()
        let (entries, unsafe) = try list(transport, report: &report)
        report.problems += unsafe
        report.listed = entries.count
        let started = Date()
        var work: [Entry] = []
        var keptEntries: [Entry] = []
        for entry in entries {
            if let size = entry.size, size > limit(for: entry) {
                report.problems.append(
                    FormatError(
                        .remoteTooLarge, "\(size) bytes, more than the limit of \(limit(for: entry)); not downloaded", location: .init(file: entry.relative)))
                continue
            }
            if isCurrent(entry, in: directory, previous: previous[entry.relative]) {
                // A listing without sizes and dates (Ensembles Server) keeps what the download
                // that made the file recorded (Spec/remote.md 12.3).
                var kept = entry
                kept.size = entry.size ?? previous[entry.relative]?.size
                kept.modified = entry.modified ?? previous[entry.relative]?.modified
                keptEntries.append(kept)
            } else {
                work.append(entry)
            }
        }
        report.kept = keptEntries.count
        // Ensembles Server: the bytes come from presigned URLs, fetched without credentials, and
        // asked for a batch at a time just before that batch's downloads, since they expire
        // (Spec/remote.md 12.4).
        var downloads = transport
        var rounds = [work]
        if location.service == .ensemblesServer {
            downloads = HTTPTransport(idleTimeout: options.timeout, totalTimeout: options.timeout * 20, credentials: nil, displayName: location.display)
            let size = EnsemblesServerProtocol.downloadBatch
            rounds = stride(from: 0, to: work.count, by: size).map { Array(work[$0..<min($0 + size, work.count)]) }
        }
        // Folders first, so that the workers only write files.
        for entry in work {
            let folder = entry.path.dropLast().reduce(directory) { $0.appendingPathComponent($1, isDirectory: true) }
            do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
                report.problems.append(FormatError(.localWriteFailed, "the folder could not be created: \(error)", location: .init(file: entry.relative)))
            }
        }
        var fetchedEntries = keptEntries
        var (doneBefore, bytesBefore) = (0, Int64(0))
        for round in rounds {
            var batch = round
            if location.service == .ensemblesServer {
                let (resolved, refused) = try resolveDownloadURLs(round, transport: transport)
                batch = resolved
                report.problems += refused
            }
            // Progress counts over the whole fetch, not the round.
            let (offset, offsetBytes, total) = (doneBefore, bytesBefore, work.count)
            var roundProgress: (@Sendable (Int, Int, Int64) -> Void)?
            if let progress { roundProgress = { done, _, bytes in progress(offset + done, total, offsetBytes + bytes) } }
            let results = download(batch, into: directory, transport: downloads, progress: roundProgress)
            doneBefore += round.count
            for (entry, result) in zip(batch, results) {
                switch result {
                case .success(let (bytes, dated)):
                    report.fetched += 1
                    report.bytes += bytes
                    bytesBefore += bytes
                    // What the listing did not say, the download did (Ensembles Server: size and
                    // date, Spec/remote.md 12.3).
                    var fetched = entry
                    fetched.size = entry.size ?? bytes
                    fetched.modified = entry.modified ?? dated
                    fetchedEntries.append(fetched)
                case .failure(let error): report.problems.append(error)
                }
            }
        }
        // A file an earlier fetch wrote and the server no longer lists is removed from the
        // snapshot, so that the snapshot is the folder as it is now.
        let listedPaths = Set(entries.map(\.relative))
        for (path, _) in previous where !listedPaths.contains(path) {
            let segments = ExactString.components(of: path, omittingEmpty: true)
            guard segments.allSatisfy({ Self.unsafeReason($0) == nil }) else { continue }
            let url = segments.reduce(directory) { $0.appendingPathComponent($1) }
            if (try? FileManager.default.removeItem(at: url)) != nil { report.removed += 1 }
        }
        fetchedEntries.sort { $0.path.lexicographicallyPrecedes($1.path) }
        try writeManifest(
            into: directory, entries: fetchedEntries, previous: previous, fetchedNow: Set(work.map(\.relative)), problems: report.problems, started: started)
        return report
    }

    /// Removes the hidden partial files a killed run left in the snapshot (`.NAME.partial-UUID`,
    /// TemporaryFiles' naming rule): the snapshot is the toolkit's own folder.
    private func removePartialFiles(in directory: URL) {
        guard let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return }
        while let url = enumerator.nextObject() as? URL {
            let name = url.lastPathComponent
            guard name.hasPrefix("."), let range = name.range(of: ".partial-", options: .backwards),
                UUID(uuidString: String(name[range.upperBound...])) != nil
            else { continue }
            try? FileManager.default.removeItem(at: url)
        }
    }

    private func limit(for entry: Entry) -> Int64 {
        entry.path.contains("data") ? Self.maximumDataFileBytes : Self.maximumFileBytes
    }

    // MARK: - Listing

    /// Every file under the folder, by the listing of its protocol (WebDAV: remote.md 3; S3:
    /// 11.4; Ensembles Server: 12.3); unsafe names are reported, not listed.
    func list(_ transport: HTTPTransport, report: inout Report) throws(FormatError) -> ([Entry], [FormatError]) {
        switch location.service {
        case .webdav: try listWebDAV(transport, report: &report)
        case .s3: try listS3(transport, report: &report)
        case .ensemblesServer: try listEnsemblesServer(transport)
        }
    }

    /// Why `name` cannot be a file's name in the snapshot, or nil (Spec/remote.md 4.4).
    package static func unsafeReason(_ name: String) -> String? {
        if name.isEmpty { return "an empty name" }
        if name == "." || name == ".." { return "the name \(name)" }
        // By bytes: a slash followed by a combining mark is one character, not "/".
        if name.utf8.contains(UInt8(ascii: "/")) { return "a name containing /" }
        if name.utf8.contains(0) { return "a name containing NUL" }
        if name.utf8.count > 255 { return "a name longer than 255 bytes" }
        return nil
    }

    /// What an answer that is not success says beyond its status, for its protocol.
    func hint(_ response: HTTPTransport.Response) -> String {
        switch location.service {
        case .webdav, .ensemblesServer: Self.statusHint(response.status)
        case .s3: s3Hint(response)
        }
    }

    static func statusHint(_ status: Int) -> String {
        switch status {
        case 401: " (authentication failed or none given: LOGTOOL_REMOTE_USER, LOGTOOL_REMOTE_PASSWORD or --remote-password-file)"
        case 403: " (forbidden)"
        case 404: " (not found)"
        case 405: " (the server does not speak WebDAV here)"
        default: ""
        }
    }

    // MARK: - Fetching

    /// True when the snapshot's file has the entry's size and its ETag (from the manifest) or
    /// its date: a file renamed into place is complete, so a file present is only stale.
    private func isCurrent(_ entry: Entry, in directory: URL, previous: ManifestEntry?) -> Bool {
        let url = entry.path.reduce(directory) { $0.appendingPathComponent($1) }
        var info = stat()
        guard lstat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        // Ensembles Server lists names only: a file an earlier fetch completed, of the size its
        // manifest records, is current, for files of a cloud folder never change under their
        // name (cloud-layout.md 1; Spec/remote.md 12.3).
        if location.service == .ensemblesServer, entry.size == nil {
            guard let known = previous?.size else { return false }
            return Int64(info.st_size) == known
        }
        guard let size = entry.size, Int64(info.st_size) == size else { return false }
        if let etag = entry.etag, let known = previous?.etag { return etag == known }
        guard let modified = entry.modified else { return false }
        return Int64(info.st_mtim.tv_sec) == Int64(modified.timeIntervalSince1970.rounded(.down))
    }

    /// Downloads `work` with at most ``maximumInFlight`` requests at once; each file is written
    /// under a hidden name beside its own, dated, then renamed into place.
    private func download(
        _ work: [Entry], into directory: URL, transport: HTTPTransport, progress: (@Sendable (Int, Int, Int64) -> Void)?
    ) -> [Result<(Int64, Date?), FormatError>] {
        final class Shared: @unchecked Sendable {
            let lock = NSLock()
            var next = 0
            var done = 0
            var bytes: Int64 = 0
            var results: [Result<(Int64, Date?), FormatError>?]
            init(count: Int) { results = Array(repeating: nil, count: count) }
        }
        let shared = Shared(count: work.count)
        let group = DispatchGroup()
        let workers = min(Self.maximumInFlight, work.count)
        for _ in 0..<workers {
            group.enter()
            // Threads of their own: each blocks on its request, and Dispatch's pool would not
            // grow past the cores.
            let thread = Thread {
                while true {
                    shared.lock.lock()
                    let index = shared.next
                    shared.next += 1
                    shared.lock.unlock()
                    guard index < work.count else { break }
                    let result: Result<(Int64, Date?), FormatError>
                    do throws(FormatError) { result = .success(try self.downloadOne(work[index], into: directory, transport: transport)) } catch {
                        result = .failure(error)
                    }
                    shared.lock.lock()
                    shared.results[index] = result
                    shared.done += 1
                    if case .success(let (bytes, _)) = result { shared.bytes += bytes }
                    let (done, bytes) = (shared.done, shared.bytes)
                    shared.lock.unlock()
                    progress?(done, work.count, bytes)
                }
                group.leave()
            }
            thread.start()
        }
        group.wait()
        return shared.results.map { $0 ?? .failure(FormatError(.remoteConnection, "not fetched")) }
    }

    /// Downloads one file; returns its bytes and the date it was given (nil: none known).
    private func downloadOne(_ entry: Entry, into directory: URL, transport: HTTPTransport) throws(FormatError) -> (Int64, Date?) {
        let destination = entry.path.reduce(directory) { $0.appendingPathComponent($1) }
        let staged = TemporaryFiles.reserveSibling(of: destination)
        defer { TemporaryFiles.release(staged) }
        let handle: FileHandle
        do { handle = try TemporaryFiles.openFile(staged) } catch {
            throw FormatError(.localWriteFailed, "the file could not be created: \(error)", location: .init(file: entry.relative))
        }
        let response: HTTPTransport.Response
        do {
            defer { try? handle.close() }
            response = try transport.perform(
                .init(method: "GET", url: entry.source ?? location.url(of: entry.path, isFolder: false), sink: .file(handle), limit: limit(for: entry)),
                origin: location, file: entry.relative, followRedirects: entry.source == nil)
        }
        guard (200..<300).contains(response.status) else {
            throw FormatError(.remoteHTTPStatus, "GET answered \(response.status)\(hint(response))", location: .init(file: entry.relative))
        }
        if let size = entry.size, size != response.bytes {
            throw FormatError(
                .remoteConnection, "the listing said \(size) bytes and \(response.bytes) came; the file changed while it was fetched?",
                location: .init(file: entry.relative))
        }
        let modified = entry.modified ?? response.headers["last-modified"].flatMap(MultistatusReader.date)
        if let modified {
            // The modification time goes on before the rename: a file under its own name always
            // carries the server's date (Spec/remote.md 4.2).
            do { try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: staged.path) } catch {
                throw FormatError(.localWriteFailed, "the file's date could not be set: \(error)", location: .init(file: entry.relative))
            }
        }
        guard rename(staged.path, destination.path) == 0 else {
            throw FormatError(.localWriteFailed, "the file could not be renamed into place (errno \(errno))", location: .init(file: entry.relative))
        }
        return (response.bytes, modified)
    }
}
