import Foundation
import JSONDocument
import EnsembleModel
import EventCodecs
import CloudFolder
import FileWrappers

/// The facts `logtool inspect` reports, as the JSON document Spec/inspect.md defines.
/// The text output is rendered from this same document, so both always say the same.
enum InspectReport {
    package static let version: Int64 = 1

    /// The report for `path`: a cloud folder, an ensemble folder or one event file.
    /// Throws when the path is missing or is a folder without any ensemble.
    package static func make(path: String, reader: EventFileReader = EventFileReader()) throws(FormatError) -> JSONValue {
        var isDirectory: ObjCBool = false
        guard path == EventFileReader.standardInputName || FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw FormatError(.folderNotFound, "no such file or folder", location: .init(file: path))
        }
        if isDirectory.boolValue {
            return try folderInspection(path: path, reader: reader).jsonValue
        }
        let url = URL(fileURLWithPath: path)
        let position = eventPartPosition(forFileNamed: url.lastPathComponent)
        if position != .single {
            return file(displayName: path, position: position, result: reader.readPart(at: url, position: position, displayName: path))
        }
        let result = reader.readFile(at: url, displayName: path)
        if result.isLog { return log(displayName: path, result: result) }
        let part = result.events.first.map { event in
            EventPart(
                position: .single, header: EventHeader(of: event), objectChanges: event.objectChanges,
                unknownFields: event.unknownFields, unknownKeys: result.unknownKeys)
        }
        var partResult = EventFileReader.PartResult(encoding: result.encoding, part: part, errors: result.errors)
        partResult.layers = result.layers
        return file(displayName: path, position: .single, result: partResult)
    }

    /// The report for a v1 log: every event, in canonical v2 JSON.
    static func log(displayName: String, result: EventFileReader.FileResult) -> JSONValue {
        var errors = result.errors
        var events: [JSONValue] = []
        for event in result.events {
            do {
                events.append(try V2JSONEncoder().jsonValue(event))
            } catch {
                errors.append(error.inFile(displayName))
            }
        }
        return .object(
            JSONObject(
                [
                    ("inspectVersion", JSONValue(version)),
                    ("kind", .string("log")),
                    ("file", .string(displayName)),
                    ("encoding", result.encoding.map { .string($0.rawValue) } ?? .null),
                ] + layers(result.layers) + [
                    ("events", .array(events)),
                    ("unreadable", .array(problems(errors))),
                    ("unknownKeys", .array(result.unknownKeys.map { unknownKey(UnknownKey(file: displayName, pointer: $0)) })),
                ]))
    }

    /// Which part of a multipart event a lone file is, from its name (`_<i>of<n>`).
    static func eventPartPosition(forFileNamed name: String) -> EventPartPosition {
        let part = CloudFileName.parseEvent(name)?.part ?? CloudFileName.parseBaseline(name)?.part
        return part.map { .part(index: $0.index, count: $0.count) } ?? .single
    }

    // MARK: - Folders

    /// The typed report for the folder at `path` (an ensemble or a root of ensembles), whose
    /// document the command prints (Spec/inspect.md 3.1); throws when it is missing or holds no
    /// ensemble.
    package static func folderInspection(path: String, reader: EventFileReader = EventFileReader()) throws(FormatError) -> FolderInspection {
        FolderInspection(try CloudFolderScanner().scan(path), reader: reader)
    }

    /// Missing revisions between the lowest and the highest present, as closed ranges.
    static func gaps(_ sorted: [Int64]) -> [ClosedRange<Int64>] {
        zip(sorted, sorted.dropFirst()).compactMap { a, b in b > a + 1 ? (a + 1)...(b - 1) : nil }
    }

    /// The `layers` member of a wrapped file (Spec/inspect.md, Spec/wrappers.md 8); none for a
    /// plain file, so that reports of plain folders keep their shape.
    static func layers(_ layers: [WrapperLayer]) -> [(String, JSONValue)] {
        layers.isEmpty ? [] : [("layers", .array(layers.map { .string($0.rawValue) }))]
    }

    /// Sorted by (file, offset, pointer, code), null first; one entry per (file, code, pointer, offset).
    static func problems(_ errors: [FormatError]) -> [JSONValue] { sortedProblems(errors).map(\.jsonValue) }

    /// The errors as the Unreadable list reports them (Spec/inspect.md 3.1): sorted by (file,
    /// offset, pointer, code), null first, each (file, code, pointer, offset) once, with only
    /// the members the list has (no line or column; a missing file as `""`).
    static func sortedProblems(_ errors: [FormatError]) -> [FormatError] {
        var seen = Set<ExactString>()
        return errors.sorted { a, b in
            let fileA = a.location.file ?? "", fileB = b.location.file ?? ""
            if !fileA.utf8.elementsEqual(fileB.utf8) { return utf8Precedes(fileA, fileB) }
            if a.location.offset != b.location.offset { return (a.location.offset ?? -1) < (b.location.offset ?? -1) }
            if a.location.pointer != b.location.pointer {
                guard let pointerA = a.location.pointer else { return true }
                guard let pointerB = b.location.pointer else { return false }
                return pointerA < pointerB
            }
            return a.code < b.code
        }.filter { error in
            let location = error.location
            return seen.insert(
                ExactString("\(location.file ?? "")\u{0}\(error.code)\u{0}\(location.pointer?.description ?? "-")\u{0}\(location.offset ?? -1)")
            ).inserted
        }.map { error in
            FormatError(
                error.code, error.message, location: .init(file: error.location.file ?? "", offset: error.location.offset, pointer: error.location.pointer))
        }
    }

    static func unknownKey(_ key: UnknownKey) -> JSONValue {
        .object(JSONObject([("file", .string(key.file)), ("pointer", .string(key.pointer.description))]))
    }

    // MARK: - Single files

    /// The report for one event file (a single-file event or one part of a multipart event).
    package static func file(displayName: String, position: EventPartPosition, result: EventFileReader.PartResult) -> JSONValue {
        var eventValue: JSONValue = .null
        var errors = result.errors
        if let part = result.part {
            do {
                eventValue = try V2JSONEncoder().jsonValue(part)
            } catch {
                errors.append(error.inFile(displayName))
            }
        }
        var partValue: JSONValue = .null
        if case .part(let index, let count) = position {
            partValue = .object(JSONObject([("index", JSONValue(Int64(index))), ("count", JSONValue(Int64(count)))]))
        }
        return .object(
            JSONObject(
                [
                    ("inspectVersion", JSONValue(version)),
                    ("kind", .string("event")),
                    ("file", .string(displayName)),
                    ("encoding", result.encoding.map { .string($0.rawValue) } ?? .null),
                ] + layers(result.layers ?? []) + [
                    ("part", partValue),
                    ("event", eventValue),
                    ("unreadable", .array(problems(errors))),
                    ("unknownKeys", .array((result.part?.unknownKeys ?? []).map { unknownKey(UnknownKey(file: displayName, pointer: $0)) })),
                ]))
    }

    // MARK: - Formatting

    /// Seconds since 2001 as a JSON number (the canonical double form).
    static func timestamp(_ seconds: Double) -> JSONValue {
        seconds.isFinite ? JSONValue(seconds) : .null
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` in UTC; a fraction of a second is dropped, rounding toward the past.
    package static func isoDate(_ date: Date) -> String {
        isoFormatter().string(from: wholeSeconds(date))
    }

    /// The date rounded toward the past to the whole second, as the report gives it.
    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate.rounded(.down))
    }

    /// The date `YYYY-MM-DDTHH:MM:SSZ` names, or nil for other text.
    static func parseISODate(_ text: String) -> Date? {
        guard text.utf8.count == 20, text.hasSuffix("Z") else { return nil }
        return isoFormatter().date(from: text)
    }

    private static func isoFormatter() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withInternetDateTime]
        return formatter
    }
}

extension FormatError {
    /// The error as the Unreadable / Error objects of Spec/inspect.md and Spec/convert.md.
    package var jsonValue: JSONValue {
        .object(
            JSONObject([
                ("file", .string(location.file ?? "")),
                ("code", .string(code.rawValue)),
                ("pointer", location.pointer.map { .string($0.description) } ?? .null),
                ("offset", location.offset.map { JSONValue(Int64($0)) } ?? .null),
                ("message", .string(message)),
            ]))
    }
}

extension Ensemble {
    /// What the first input holds (Spec/inspect.md): every ensemble, store, event, baseline,
    /// data file and piece of debris of a cloud folder, one decoded event file or log, a data
    /// model (`.xcdatamodeld`, `.xcdatamodel`, `.momd`, `.mom`: its versions, `modelVersion` or
    /// the current one described) or an app's Core Data SQLite store, as the `inspect` document
    /// of its kind. Nothing is written. For a folder, ``inspectFolder()`` gives the same
    /// document as typed values (Spec/inspect.md 3.1).
    public func inspect(modelVersion: String? = nil) throws(EnsembleError) -> JSONValue {
        let path = try firstInput()
        if ModelBundle.looksLikeModel(path) { return ModelInspection.report(path: path, version: modelVersion) }
        // An SQLite file is read as an app's Core Data store (Spec/inspect.md 2.5).
        if path != EventFileReader.standardInputName && StoreInspection.looksLikeStore(path) { return StoreInspection.report(path: path) }
        let reader = try reader()
        do {
            return try InspectReport.make(path: path, reader: reader)
        } catch {
            throw EnsembleError(.usage, error)
        }
    }
}
