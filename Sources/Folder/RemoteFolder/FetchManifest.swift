import Foundation
import JSONDocument
import TemporaryFiles

/// A file as the manifest of an earlier fetch records it.
struct ManifestEntry: Sendable {
    var etag: String?
    var fetched: String?
    /// The size recorded (Ensembles Server's listing has none: Spec/remote.md 12.3).
    var size: Int64? = nil
    /// The date recorded (`lastModified`).
    var modified: Date? = nil
}

extension RemoteSnapshot {
    /// Makes `directory` ready and returns what its manifest says was fetched before: a new
    /// folder (its parent must exist), an empty one, or a snapshot of the same URL; anything
    /// else is refused (Spec/remote.md 4.1).
    func prepare(_ directory: URL) throws(FormatError) -> [String: ManifestEntry] {
        let path = directory.path
        var info = stat()
        if lstat(path, &info) != 0 {
            let parent = directory.deletingLastPathComponent().path
            var parentInfo = stat()
            guard stat(parent, &parentInfo) == 0, parentInfo.st_mode & S_IFMT == S_IFDIR else {
                throw FormatError(.init("file.parent-missing"), "the folder to create has no parent folder", location: .init(file: path))
            }
            guard mkdir(path, 0o777) == 0 else {
                throw FormatError(.localWriteFailed, "the folder could not be created (errno \(errno))", location: .init(file: path))
            }
            try writeManifest(into: directory, entries: [], previous: [:], fetchedNow: [], problems: [], started: Date(), complete: false)
            return [:]
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw FormatError(.remoteDestinationNotSnapshot, "exists and is not a folder", location: .init(file: path))
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        if names.isEmpty {
            try writeManifest(into: directory, entries: [], previous: [:], fetchedNow: [], problems: [], started: Date(), complete: false)
            return [:]
        }
        let manifest = directory.appendingPathComponent(Self.manifestName)
        guard let data = FileManager.default.contents(atPath: manifest.path), data.count <= 512 << 20,
            let document = try? JSONParser.parse(data), document[JSONPointer(["url"])]?.stringValue != nil
        else {
            throw FormatError(
                .remoteDestinationNotSnapshot, "holds files and no \(Self.manifestName); fetch into a new or empty folder", location: .init(file: path))
        }
        guard document[JSONPointer(["url"])]?.stringValue == location.display else {
            throw FormatError(
                .remoteDestinationNotSnapshot, "is a snapshot of another URL; fetch into a new or empty folder", location: .init(file: path))
        }
        var entries: [String: ManifestEntry] = [:]
        let dates = ISO8601DateFormatter()
        for file in document[JSONPointer(["files"])]?.arrayValue ?? [] {
            guard let relative = file[JSONPointer(["path"])]?.stringValue else { continue }
            entries[relative] = ManifestEntry(
                etag: file[JSONPointer(["etag"])]?.stringValue, fetched: file[JSONPointer(["fetched"])]?.stringValue,
                size: file[JSONPointer(["size"])]?.numberValue.flatMap { Int64($0.description) },
                modified: file[JSONPointer(["lastModified"])]?.stringValue.flatMap { dates.date(from: $0) })
        }
        return entries
    }

    /// Writes the manifest (Spec/remote.md 4.3) under a hidden name and renames it into place.
    /// It names the URL as given (credentials are never in it: a URL holding them is refused).
    func writeManifest(
        into directory: URL, entries: [Entry], previous: [String: ManifestEntry], fetchedNow: Set<String>, problems: [FormatError], started: Date,
        complete: Bool = true
    ) throws(FormatError) {
        let now = Self.timestamp(Date())
        let startedText = Self.timestamp(started)
        let files: [JSONValue] = entries.map { entry in
            let fetched = fetchedNow.contains(entry.relative) ? now : previous[entry.relative]?.fetched ?? startedText
            return .object(
                JSONObject([
                    ("etag", entry.etag.map(JSONValue.string) ?? .null),
                    ("fetched", .string(fetched)),
                    ("lastModified", entry.modified.map { .string(Self.timestamp($0)) } ?? .null),
                    ("path", .string(entry.relative)),
                    ("size", entry.size.map { JSONValue($0) } ?? .null),
                ]))
        }
        let document = JSONValue.object(
            JSONObject([
                ("complete", .bool(complete && problems.isEmpty)),
                ("files", .array(files)),
                ("finished", complete ? .string(now) : .null),
                ("manifestVersion", JSONValue(Int64(1))),
                (
                    "problems",
                    .array(
                        problems.map { problem in
                            .object(
                                JSONObject([
                                    ("code", .string(problem.code.rawValue)), ("file", problem.location.file.map(JSONValue.string) ?? .null),
                                    ("message", .string(problem.message)),
                                ]))
                        })
                ),
                ("protocol", .string(location.service.rawValue)),
                ("started", .string(startedText)),
                ("url", .string(location.display)),
            ]))
        let destination = directory.appendingPathComponent(Self.manifestName)
        let staged = TemporaryFiles.reserveSibling(of: destination)
        defer { TemporaryFiles.release(staged) }
        do {
            try Data((JSONWriter().string(document) + "\n").utf8).write(to: staged)
        } catch {
            throw FormatError(.localWriteFailed, "the manifest could not be written: \(error)", location: .init(file: destination.path))
        }
        guard rename(staged.path, destination.path) == 0 else {
            throw FormatError(.localWriteFailed, "the manifest could not be renamed into place (errno \(errno))", location: .init(file: destination.path))
        }
    }

    /// A date as the manifest writes it: RFC 3339 in UTC, whole seconds.
    static func timestamp(_ date: Date) -> String {
        // The format style, not an ISO8601DateFormatter made per call (most of a no-op fetch's time).
        date.formatted(.iso8601)
    }
}
