import Foundation
import JSONDocument
import EnsembleModel
import CloudFolder

/// What ``Ensemble/inspectFolder()`` finds in a cloud folder: the folder document of
/// `logtool inspect --json` (Spec/inspect.md 3.1) as Swift values. Encoded with `JSONEncoder`
/// it is that document, member for member (`Spec/schemas/inspect.schema.json`, kind `folder`),
/// and `JSONDecoder` reads the command's output back into it; the command prints this very value.
///
/// Entries small enough to need no name of their own (a data file, a gap, a piece of debris)
/// are labelled tuples, as in ``ConversionReport``.
public struct FolderInspection: Sendable, Equatable, Codable {
    /// Every ensemble of the folder, sorted by identifier (UTF-8 order): one when the input is an
    /// ensemble folder, each ensemble of a root.
    public var ensembles: [EnsembleFolder]

    /// The totals of the document's `summary` (Spec/inspect.md 3.1), from ``ensembles``.
    public var summary: (ensembles: Int, stores: Int, events: Int, baselines: Int, dataFiles: Int, debris: Int, unreadable: Int) {
        ensembles.reduce((ensembles.count, 0, 0, 0, 0, 0, 0)) { sum, ensemble in
            (
                sum.0, sum.1 + ensemble.stores.count, sum.2 + ensemble.events.count, sum.3 + ensemble.baselines.count,
                sum.4 + ensemble.dataFiles.count, sum.5 + ensemble.debris.count, sum.6 + ensemble.unreadable.count
            )
        }
    }

    /// One ensemble folder (Spec/inspect.md 3.1, Ensemble). Paths inside it are relative to it.
    public struct EnsembleFolder: Sendable, Equatable, Codable {
        /// The ensemble folder's name.
        public var identifier: String
        /// The ensemble folder relative to the input; `"."` when the input is the ensemble folder.
        public var path: String
        /// Registered stores and stores named by events, sorted by identifier.
        public var stores: [Store]
        /// One per logical event, sorted by (global count, store, revision).
        public var events: [EventFile]
        /// One per logical baseline, sorted by (global count, file).
        public var baselines: [BaselineFile]
        /// The files of `data/`: name inside `data/` and size in bytes, sorted by name.
        public var dataFiles: [(name: String, bytes: Int64)]
        /// Entries that are not part of the ensemble (Spec/cloud-layout.md), sorted by path;
        /// `kind` is one of Spec/inspect.md 3.1's Debris kinds, `reason` is informative.
        public var debris: [(path: String, kind: String, reason: String)]
        /// Copies of the folder a sync service made, in folding order (Spec/cloud-layout.md
        /// 3.1): the folder (`../MainStore 2`), the folded paths only it has, and how many files
        /// the ensemble already had.
        public var duplicateFolders: [(path: String, copied: [String], shared: Int)]
        /// Every read error, sorted by (file, offset, pointer, code), each (file, code, pointer,
        /// offset) once; line and column are not reported.
        public var unreadable: [FormatError]
        /// Members no reader knows (Spec/README.md 5.2), sorted by (file, pointer).
        public var unknownKeys: [(file: String, pointer: JSONPointer)]
    }

    /// A store registered in `stores/` or named by an event (Spec/inspect.md 3.1, Store).
    public struct Store: Sendable, Equatable, Codable {
        /// The store identifier.
        public var identifier: String
        /// Whether a registration file exists (even an invalid one).
        public var registered: Bool
        /// The registration's leech date, to the whole second (rounded toward the past); nil
        /// when not registered or the file is invalid.
        public var leechDate: Date?
        /// How many events of this store the folder has.
        public var events: Int
        /// The lowest revision among them; nil without events.
        public var firstRevision: Int64?
        /// The highest revision among them; nil without events.
        public var lastRevision: Int64?
        /// Every maximal range of revisions between the first and the last with no event,
        /// ascending.
        public var gaps: [ClosedRange<Int64>]
    }

    /// One logical event of `events/` (Spec/inspect.md 3.1, Event).
    public struct EventFile: Sendable, Equatable, Codable {
        /// The single file, or part 1 (the lowest present part when part 1 is missing).
        public var file: String
        /// From the file name.
        public var globalCount: Int64
        /// The store identifier, from the file name.
        public var store: String
        /// From the file name.
        public var revision: Int64
        /// From the header; nil when the event is incomplete or a file of it is unreadable (so
        /// for ``timestamp`` and ``objectChanges``).
        public var type: EventType?
        /// Seconds since 2001, from the header.
        public var timestamp: Double?
        /// The object changes of the whole event.
        public var objectChanges: Int?
        /// The sizes of the present files, added.
        public var bytes: Int64
        /// For a multipart event: the part count, the part numbers present (ascending), whether
        /// all are; nil for a single file.
        public var parts: (count: Int, present: [Int], complete: Bool)?
        /// The wrappers removed before reading, outermost first (`"zip"`, `"encrypted"`,
        /// Spec/wrappers.md 8); empty for a plain file, whose entry has no `layers` member.
        public var layers: [String]
    }

    /// One logical baseline of `baselines/` (Spec/inspect.md 3.1, Baseline).
    public struct BaselineFile: Sendable, Equatable, Codable {
        /// As for ``EventFile/file``.
        public var file: String
        /// Whether the name has the legacy form (no store prefix).
        public var legacyName: Bool
        /// From the file name.
        public var globalCount: Int64
        /// From the file name.
        public var uniqueIdentifier: String
        /// The 8-character store prefix of the name; nil for a legacy name.
        public var storePrefix: String?
        /// The store identifier from the header; nil as for ``EventFile/type``.
        public var store: String?
        /// The header's revisions by store, stores in UTF-8 order; nil as for ``store``.
        public var revisionSet: [(store: String, revision: Int64)]?
        /// The object changes of the whole baseline; nil as for ``store``.
        public var objectChanges: Int?
        /// The sizes of the present files, added.
        public var bytes: Int64
        /// As for ``EventFile/parts``.
        public var parts: (count: Int, present: [Int], complete: Bool)?
        /// As for ``EventFile/layers``.
        public var layers: [String]
    }
}

// MARK: - Building (package)

extension FolderInspection {
    /// The report of the folder's ensembles, in the order Spec/inspect.md 3.1 gives. Each
    /// ensemble is read, summarized (object changes counted, not kept) and reported before the
    /// next is read: a folder's whole events were all held at once, four times the memory of
    /// its report (Benchmarks/README.md, memory per event).
    package init(_ listings: [EnsembleListing], reader: EventFileReader) {
        ensembles = listings.map { EnsembleFolder(EnsembleContents.read($0, reader: reader, summarize: true)) }
            .sorted { utf8Precedes($0.identifier, $1.identifier) }
    }
}

extension FolderInspection.EnsembleFolder {
    package init(_ contents: EnsembleContents) {
        identifier = contents.identifier
        path = contents.displayPath
        stores = FolderInspection.Store.all(contents)
        events = contents.events.map(FolderInspection.EventFile.init)
        baselines = contents.baselines.map(FolderInspection.BaselineFile.init)
        dataFiles = contents.dataFiles.sorted { utf8Precedes($0.name, $1.name) }.map { (name: $0.name, bytes: $0.bytes) }
        debris = contents.debris.sorted { utf8Precedes($0.path, $1.path) }.map { (path: $0.path, kind: $0.kind.rawValue, reason: $0.reason) }
        duplicateFolders = contents.duplicates.map { (path: $0.path, copied: $0.copied, shared: $0.shared.count) }
        unreadable = InspectReport.sortedProblems(contents.problems)
        unknownKeys = contents.unknownKeys.map { (file: $0.file, pointer: $0.pointer) }
    }
}

extension FolderInspection.Store {
    /// Registered stores plus stores seen only in event names, by identifier.
    static func all(_ contents: EnsembleContents) -> [Self] {
        // By the identifiers' bytes: stores named in NFC and NFD are two stores.
        var registrations: [ExactString: StoreRegistration] = [:]
        for store in contents.stores { registrations[ExactString(store.storeIdentifier)] = store }
        var revisions: [ExactString: [Int64]] = [:]
        for event in contents.events { revisions[ExactString(event.name.storeIdentifier), default: []].append(event.name.revision) }
        return sortedUnique((Array(registrations.keys) + Array(revisions.keys)).map(\.value)).map { identifier in
            let list = (revisions[ExactString(identifier)] ?? []).sorted()
            let registration = registrations[ExactString(identifier)]
            return Self(
                identifier: identifier, registered: registration != nil,
                leechDate: registration?.leechDate.map(InspectReport.wholeSeconds), events: list.count,
                firstRevision: list.first, lastRevision: list.last, gaps: InspectReport.gaps(list))
        }
    }
}

extension FolderInspection.EventFile {
    init(_ file: EventFileEntry) {
        let event = file.entry.event
        self.init(
            file: file.entry.file, globalCount: file.name.globalCount, store: file.name.storeIdentifier, revision: file.name.revision,
            type: event?.type, timestamp: event.flatMap { $0.timestamp.isFinite ? $0.timestamp : nil },
            objectChanges: file.entry.changeCounts?.total, bytes: file.entry.bytes, parts: FolderInspection.parts(file.entry),
            layers: file.entry.layers.map(\.rawValue))
    }
}

extension FolderInspection.BaselineFile {
    init(_ file: BaselineFileEntry) {
        let event = file.entry.event
        self.init(
            file: file.entry.file, legacyName: file.name.isLegacyName, globalCount: file.name.globalCount,
            uniqueIdentifier: file.name.uniqueIdentifier, storePrefix: file.name.storePrefix, store: event?.storeIdentifier,
            revisionSet: event.map { $0.revisionSet.revisions }, objectChanges: file.entry.changeCounts?.total, bytes: file.entry.bytes,
            parts: FolderInspection.parts(file.entry), layers: file.entry.layers.map(\.rawValue))
    }
}

extension FolderInspection {
    static func parts(_ entry: EventEntry) -> (count: Int, present: [Int], complete: Bool)? {
        entry.partCount.map { (count: $0, present: entry.files.keys.sorted(), complete: entry.isComplete) }
    }
}

// MARK: - The command's document (package)

extension FolderInspection {
    /// The folder document as the command prints it (Spec/inspect.md 3.1), members in the
    /// Spec's order. Tests check that `JSONEncoder` gives the same document.
    package var jsonValue: JSONValue {
        let summary = self.summary
        return .object(
            JSONObject([
                ("inspectVersion", JSONValue(InspectReport.version)),
                ("kind", .string("folder")),
                ("ensembles", .array(ensembles.map(\.jsonValue))),
                (
                    "summary",
                    .object(
                        JSONObject([
                            ("ensembles", JSONValue(Int64(summary.ensembles))), ("stores", JSONValue(Int64(summary.stores))),
                            ("events", JSONValue(Int64(summary.events))), ("baselines", JSONValue(Int64(summary.baselines))),
                            ("dataFiles", JSONValue(Int64(summary.dataFiles))), ("debris", JSONValue(Int64(summary.debris))),
                            ("unreadable", JSONValue(Int64(summary.unreadable))),
                        ]))
                ),
            ]))
    }
}

extension FolderInspection.EnsembleFolder {
    var jsonValue: JSONValue {
        .object(
            JSONObject([
                ("identifier", .string(identifier)),
                ("path", .string(path)),
                ("stores", .array(stores.map(\.jsonValue))),
                ("events", .array(events.map(\.jsonValue))),
                ("baselines", .array(baselines.map(\.jsonValue))),
                (
                    "dataFiles",
                    .object(
                        JSONObject([
                            ("count", JSONValue(Int64(dataFiles.count))),
                            ("bytes", JSONValue(dataFiles.reduce(Int64(0)) { $0 + $1.bytes })),
                            ("files", .array(dataFiles.map { .object(JSONObject([("name", .string($0.name)), ("bytes", JSONValue($0.bytes))])) })),
                        ]))
                ),
                (
                    "debris",
                    .array(
                        debris.map {
                            .object(JSONObject([("path", .string($0.path)), ("kind", .string($0.kind)), ("reason", .string($0.reason))]))
                        })
                ),
                (
                    "duplicateFolders",
                    .array(
                        duplicateFolders.map {
                            .object(
                                JSONObject([
                                    ("path", .string($0.path)), ("copied", .array($0.copied.map(JSONValue.string))),
                                    ("shared", JSONValue(Int64($0.shared))),
                                ]))
                        })
                ),
                ("unreadable", .array(unreadable.map(\.jsonValue))),
                (
                    "unknownKeys",
                    .array(unknownKeys.map { .object(JSONObject([("file", .string($0.file)), ("pointer", .string($0.pointer.description))])) })
                ),
            ]))
    }
}

extension FolderInspection.Store {
    var jsonValue: JSONValue {
        .object(
            JSONObject([
                ("identifier", .string(identifier)),
                ("registered", .bool(registered)),
                ("leechDate", leechDate.map { .string(InspectReport.isoDate($0)) } ?? .null),
                ("events", JSONValue(Int64(events))),
                ("firstRevision", firstRevision.map(JSONValue.init) ?? .null),
                ("lastRevision", lastRevision.map(JSONValue.init) ?? .null),
                ("gaps", .array(gaps.map { .object(JSONObject([("first", JSONValue($0.lowerBound)), ("last", JSONValue($0.upperBound))])) })),
            ]))
    }
}

extension FolderInspection.EventFile {
    var jsonValue: JSONValue {
        .object(
            JSONObject(
                [
                    ("file", .string(file)),
                    ("globalCount", JSONValue(globalCount)),
                    ("store", .string(store)),
                    ("revision", JSONValue(revision)),
                    ("type", type.map { JSONValue($0.rawValue) } ?? .null),
                    ("timestamp", timestamp.map(JSONValue.init) ?? .null),
                    ("objectChanges", objectChanges.map { JSONValue(Int64($0)) } ?? .null),
                    ("bytes", JSONValue(bytes)),
                    ("parts", FolderInspection.partsValue(parts)),
                ] + FolderInspection.layersMember(layers)))
    }
}

extension FolderInspection.BaselineFile {
    var jsonValue: JSONValue {
        .object(
            JSONObject(
                [
                    ("file", .string(file)),
                    ("legacyName", .bool(legacyName)),
                    ("globalCount", JSONValue(globalCount)),
                    ("uniqueIdentifier", .string(uniqueIdentifier)),
                    ("storePrefix", storePrefix.map(JSONValue.string) ?? .null),
                    ("store", store.map(JSONValue.string) ?? .null),
                    ("revisionSet", revisionSet.map { .object(JSONObject($0.map { ($0.store, JSONValue($0.revision)) })) } ?? .null),
                    ("objectChanges", objectChanges.map { JSONValue(Int64($0)) } ?? .null),
                    ("bytes", JSONValue(bytes)),
                    ("parts", FolderInspection.partsValue(parts)),
                ] + FolderInspection.layersMember(layers)))
    }
}

extension FolderInspection {
    static func partsValue(_ parts: (count: Int, present: [Int], complete: Bool)?) -> JSONValue {
        guard let parts else { return .null }
        return .object(
            JSONObject([
                ("count", JSONValue(Int64(parts.count))), ("present", .array(parts.present.map { JSONValue(Int64($0)) })),
                ("complete", .bool(parts.complete)),
            ]))
    }

    /// No `layers` member for a plain file, so that reports of plain folders keep their shape.
    static func layersMember(_ layers: [String]) -> [(String, JSONValue)] {
        layers.isEmpty ? [] : [("layers", .array(layers.map(JSONValue.string)))]
    }
}

// MARK: - Codable (the same document)

extension FolderInspection {
    private enum CodingKeys: String, CodingKey {
        case inspectVersion, kind, ensembles, summary
    }

    private enum SummaryKeys: String, CodingKey {
        case ensembles, stores, events, baselines, dataFiles, debris, unreadable
    }

    /// Reads a folder document; `summary` is checked against the ensembles rather than kept.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard try container.decode(Int64.self, forKey: .inspectVersion) == InspectReport.version else {
            throw DecodingError.dataCorruptedError(forKey: .inspectVersion, in: container, debugDescription: "not inspectVersion 1")
        }
        guard try container.decode(String.self, forKey: .kind) == "folder" else {
            throw DecodingError.dataCorruptedError(forKey: .kind, in: container, debugDescription: "not a folder document")
        }
        ensembles = try container.decode([EnsembleFolder].self, forKey: .ensembles)
        let summary = try container.nestedContainer(keyedBy: SummaryKeys.self, forKey: .summary)
        let expected = self.summary
        let totals: [(SummaryKeys, Int)] = [
            (.ensembles, expected.ensembles), (.stores, expected.stores), (.events, expected.events), (.baselines, expected.baselines),
            (.dataFiles, expected.dataFiles), (.debris, expected.debris), (.unreadable, expected.unreadable),
        ]
        for (key, total) in totals {
            guard try summary.decode(Int.self, forKey: key) == total else {
                throw DecodingError.dataCorruptedError(forKey: key, in: summary, debugDescription: "summary differs from the ensembles")
            }
        }
    }

    /// Writes the folder document of Spec/inspect.md 3.1, `summary` computed from the ensembles.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(InspectReport.version, forKey: .inspectVersion)
        try container.encode("folder", forKey: .kind)
        try container.encode(ensembles, forKey: .ensembles)
        var summary = container.nestedContainer(keyedBy: SummaryKeys.self, forKey: .summary)
        let totals = self.summary
        try summary.encode(totals.ensembles, forKey: .ensembles)
        try summary.encode(totals.stores, forKey: .stores)
        try summary.encode(totals.events, forKey: .events)
        try summary.encode(totals.baselines, forKey: .baselines)
        try summary.encode(totals.dataFiles, forKey: .dataFiles)
        try summary.encode(totals.debris, forKey: .debris)
        try summary.encode(totals.unreadable, forKey: .unreadable)
    }
}

extension FolderInspection.EnsembleFolder {
    private enum CodingKeys: String, CodingKey {
        case identifier, path, stores, events, baselines, dataFiles, debris, duplicateFolders, unreadable, unknownKeys
    }

    private enum DataFilesKeys: String, CodingKey {
        case count, bytes, files
    }

    private enum DataFileKeys: String, CodingKey {
        case name, bytes
    }

    private enum DebrisKeys: String, CodingKey {
        case path, kind, reason
    }

    private enum DuplicateKeys: String, CodingKey {
        case path, copied, shared
    }

    private enum UnknownKeyKeys: String, CodingKey {
        case file, pointer
    }

    /// Reads the Ensemble object of Spec/inspect.md 3.1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        path = try container.decode(String.self, forKey: .path)
        stores = try container.decode([FolderInspection.Store].self, forKey: .stores)
        events = try container.decode([FolderInspection.EventFile].self, forKey: .events)
        baselines = try container.decode([FolderInspection.BaselineFile].self, forKey: .baselines)
        let files = try container.nestedContainer(keyedBy: DataFilesKeys.self, forKey: .dataFiles)
        dataFiles = try Self.decodeEach(files, .files, DataFileKeys.self) {
            try (name: $0.decode(String.self, forKey: .name), bytes: $0.decode(Int64.self, forKey: .bytes))
        }
        guard try files.decode(Int.self, forKey: .count) == dataFiles.count,
            try files.decode(Int64.self, forKey: .bytes) == dataFiles.reduce(0, { $0 + $1.bytes })
        else { throw DecodingError.dataCorruptedError(forKey: .count, in: files, debugDescription: "totals differ from the files") }
        debris = try Self.decodeEach(container, .debris, DebrisKeys.self) {
            try (path: $0.decode(String.self, forKey: .path), kind: $0.decode(String.self, forKey: .kind), reason: $0.decode(String.self, forKey: .reason))
        }
        duplicateFolders = try Self.decodeEach(container, .duplicateFolders, DuplicateKeys.self) {
            try (path: $0.decode(String.self, forKey: .path), copied: $0.decode([String].self, forKey: .copied), shared: $0.decode(Int.self, forKey: .shared))
        }
        unreadable = try container.decode([FormatError].self, forKey: .unreadable)
        unknownKeys = try Self.decodeEach(container, .unknownKeys, UnknownKeyKeys.self) { key in
            let text = try key.decode(String.self, forKey: .pointer)
            guard let pointer = JSONPointer(parsing: text) else {
                throw DecodingError.dataCorruptedError(forKey: .pointer, in: key, debugDescription: "not an RFC 6901 pointer")
            }
            return (file: try key.decode(String.self, forKey: .file), pointer: pointer)
        }
    }

    /// Each object of the array at `key`, read by `element`.
    private static func decodeEach<Outer: CodingKey, Inner: CodingKey, Element>(
        _ container: KeyedDecodingContainer<Outer>, _ key: Outer, _: Inner.Type,
        _ element: (KeyedDecodingContainer<Inner>) throws -> Element
    ) throws -> [Element] {
        var array = try container.nestedUnkeyedContainer(forKey: key)
        var elements: [Element] = []
        while !array.isAtEnd { elements.append(try element(try array.nestedContainer(keyedBy: Inner.self))) }
        return elements
    }

    /// Writes the Ensemble object of Spec/inspect.md 3.1.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(path, forKey: .path)
        try container.encode(stores, forKey: .stores)
        try container.encode(events, forKey: .events)
        try container.encode(baselines, forKey: .baselines)
        var files = container.nestedContainer(keyedBy: DataFilesKeys.self, forKey: .dataFiles)
        try files.encode(dataFiles.count, forKey: .count)
        try files.encode(dataFiles.reduce(Int64(0)) { $0 + $1.bytes }, forKey: .bytes)
        var fileArray = files.nestedUnkeyedContainer(forKey: .files)
        for file in dataFiles {
            var object = fileArray.nestedContainer(keyedBy: DataFileKeys.self)
            try object.encode(file.name, forKey: .name)
            try object.encode(file.bytes, forKey: .bytes)
        }
        var debrisArray = container.nestedUnkeyedContainer(forKey: .debris)
        for entry in debris {
            var object = debrisArray.nestedContainer(keyedBy: DebrisKeys.self)
            try object.encode(entry.path, forKey: .path)
            try object.encode(entry.kind, forKey: .kind)
            try object.encode(entry.reason, forKey: .reason)
        }
        var duplicateArray = container.nestedUnkeyedContainer(forKey: .duplicateFolders)
        for duplicate in duplicateFolders {
            var object = duplicateArray.nestedContainer(keyedBy: DuplicateKeys.self)
            try object.encode(duplicate.path, forKey: .path)
            try object.encode(duplicate.copied, forKey: .copied)
            try object.encode(duplicate.shared, forKey: .shared)
        }
        try container.encode(unreadable, forKey: .unreadable)
        var keyArray = container.nestedUnkeyedContainer(forKey: .unknownKeys)
        for key in unknownKeys {
            var object = keyArray.nestedContainer(keyedBy: UnknownKeyKeys.self)
            try object.encode(key.file, forKey: .file)
            try object.encode(key.pointer.description, forKey: .pointer)
        }
    }

    /// Member by member (tuples compared element by element).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.identifier == rhs.identifier && lhs.path == rhs.path && lhs.stores == rhs.stores && lhs.events == rhs.events
            && lhs.baselines == rhs.baselines && lhs.unreadable == rhs.unreadable
            && lhs.dataFiles.elementsEqual(rhs.dataFiles) { $0 == $1 }
            && lhs.debris.elementsEqual(rhs.debris) { $0 == $1 }
            && lhs.duplicateFolders.elementsEqual(rhs.duplicateFolders) { $0.path == $1.path && $0.copied == $1.copied && $0.shared == $1.shared }
            && lhs.unknownKeys.elementsEqual(rhs.unknownKeys) { $0 == $1 }
    }
}

extension FolderInspection.Store {
    private enum CodingKeys: String, CodingKey {
        case identifier, registered, leechDate, events, firstRevision, lastRevision, gaps
    }

    private enum GapKeys: String, CodingKey {
        case first, last
    }

    /// Reads the Store object of Spec/inspect.md 3.1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        registered = try container.decode(Bool.self, forKey: .registered)
        leechDate = try container.decodeIfPresent(String.self, forKey: .leechDate).map { text in
            guard let date = InspectReport.parseISODate(text) else {
                throw DecodingError.dataCorruptedError(forKey: .leechDate, in: container, debugDescription: "not YYYY-MM-DDTHH:MM:SSZ")
            }
            return date
        }
        events = try container.decode(Int.self, forKey: .events)
        firstRevision = try container.decodeIfPresent(Int64.self, forKey: .firstRevision)
        lastRevision = try container.decodeIfPresent(Int64.self, forKey: .lastRevision)
        var array = try container.nestedUnkeyedContainer(forKey: .gaps)
        gaps = []
        while !array.isAtEnd {
            let gap = try array.nestedContainer(keyedBy: GapKeys.self)
            let first = try gap.decode(Int64.self, forKey: .first), last = try gap.decode(Int64.self, forKey: .last)
            guard first <= last else { throw DecodingError.dataCorruptedError(forKey: .last, in: gap, debugDescription: "last below first") }
            gaps.append(first...last)
        }
    }

    /// Writes the Store object of Spec/inspect.md 3.1.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(registered, forKey: .registered)
        try container.encode(leechDate.map(InspectReport.isoDate), forKey: .leechDate)
        try container.encode(events, forKey: .events)
        try container.encode(firstRevision, forKey: .firstRevision)
        try container.encode(lastRevision, forKey: .lastRevision)
        var array = container.nestedUnkeyedContainer(forKey: .gaps)
        for gap in gaps {
            var object = array.nestedContainer(keyedBy: GapKeys.self)
            try object.encode(gap.lowerBound, forKey: .first)
            try object.encode(gap.upperBound, forKey: .last)
        }
    }
}

/// The members Event and Baseline share, and the Parts object.
private enum FileEntryKeys: String, CodingKey {
    case file, globalCount, store, revision, type, timestamp, objectChanges, bytes, parts, layers
    case legacyName, uniqueIdentifier, storePrefix, revisionSet
}

private enum PartsKeys: String, CodingKey {
    case count, present, complete
}

/// A revision set's member: any store identifier.
private struct StoreKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer<FileEntryKeys> {
    fileprivate func decodeParts() throws -> (count: Int, present: [Int], complete: Bool)? {
        guard contains(.parts), try !decodeNil(forKey: .parts) else { return nil }
        let parts = try nestedContainer(keyedBy: PartsKeys.self, forKey: .parts)
        return try (
            count: parts.decode(Int.self, forKey: .count), present: parts.decode([Int].self, forKey: .present),
            complete: parts.decode(Bool.self, forKey: .complete)
        )
    }
}

extension KeyedEncodingContainer<FileEntryKeys> {
    fileprivate mutating func encodeParts(_ parts: (count: Int, present: [Int], complete: Bool)?) throws {
        guard let parts else { return try encodeNil(forKey: .parts) }
        var object = nestedContainer(keyedBy: PartsKeys.self, forKey: .parts)
        try object.encode(parts.count, forKey: .count)
        try object.encode(parts.present, forKey: .present)
        try object.encode(parts.complete, forKey: .complete)
    }

    fileprivate mutating func encodeLayers(_ layers: [String]) throws {
        if !layers.isEmpty { try encode(layers, forKey: .layers) }
    }
}

private func sameParts(_ a: (count: Int, present: [Int], complete: Bool)?, _ b: (count: Int, present: [Int], complete: Bool)?) -> Bool {
    switch (a, b) {
    case (nil, nil): true
    case let (a?, b?): a.count == b.count && a.present == b.present && a.complete == b.complete
    default: false
    }
}

extension FolderInspection.EventFile {
    /// Reads the Event object of Spec/inspect.md 3.1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: FileEntryKeys.self)
        file = try container.decode(String.self, forKey: .file)
        globalCount = try container.decode(Int64.self, forKey: .globalCount)
        store = try container.decode(String.self, forKey: .store)
        revision = try container.decode(Int64.self, forKey: .revision)
        type = try container.decodeIfPresent(Int64.self, forKey: .type).map { raw in
            guard let type = EventType(rawValue: raw) else {
                throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown event type \(raw)")
            }
            return type
        }
        timestamp = try container.decodeIfPresent(Double.self, forKey: .timestamp)
        objectChanges = try container.decodeIfPresent(Int.self, forKey: .objectChanges)
        bytes = try container.decode(Int64.self, forKey: .bytes)
        parts = try container.decodeParts()
        layers = try container.decodeIfPresent([String].self, forKey: .layers) ?? []
    }

    /// Writes the Event object of Spec/inspect.md 3.1.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: FileEntryKeys.self)
        try container.encode(file, forKey: .file)
        try container.encode(globalCount, forKey: .globalCount)
        try container.encode(store, forKey: .store)
        try container.encode(revision, forKey: .revision)
        try container.encode(type?.rawValue, forKey: .type)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(objectChanges, forKey: .objectChanges)
        try container.encode(bytes, forKey: .bytes)
        try container.encodeParts(parts)
        try container.encodeLayers(layers)
    }

    /// Member by member (tuples compared element by element).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.file == rhs.file && lhs.globalCount == rhs.globalCount && lhs.store == rhs.store && lhs.revision == rhs.revision
            && lhs.type == rhs.type && lhs.timestamp == rhs.timestamp && lhs.objectChanges == rhs.objectChanges && lhs.bytes == rhs.bytes
            && sameParts(lhs.parts, rhs.parts) && lhs.layers == rhs.layers
    }
}

extension FolderInspection.BaselineFile {
    /// Reads the Baseline object of Spec/inspect.md 3.1.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: FileEntryKeys.self)
        file = try container.decode(String.self, forKey: .file)
        legacyName = try container.decode(Bool.self, forKey: .legacyName)
        globalCount = try container.decode(Int64.self, forKey: .globalCount)
        uniqueIdentifier = try container.decode(String.self, forKey: .uniqueIdentifier)
        storePrefix = try container.decodeIfPresent(String.self, forKey: .storePrefix)
        store = try container.decodeIfPresent(String.self, forKey: .store)
        if try container.decodeNil(forKey: .revisionSet) {
            revisionSet = nil
        } else {
            let set = try container.nestedContainer(keyedBy: StoreKey.self, forKey: .revisionSet)
            // A decoder's keys come in no particular order; the Spec's is UTF-8 order.
            revisionSet = try set.allKeys.map { (store: $0.stringValue, revision: try set.decode(Int64.self, forKey: $0)) }.sorted {
                utf8Precedes($0.store, $1.store)
            }
        }
        objectChanges = try container.decodeIfPresent(Int.self, forKey: .objectChanges)
        bytes = try container.decode(Int64.self, forKey: .bytes)
        parts = try container.decodeParts()
        layers = try container.decodeIfPresent([String].self, forKey: .layers) ?? []
    }

    /// Writes the Baseline object of Spec/inspect.md 3.1.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: FileEntryKeys.self)
        try container.encode(file, forKey: .file)
        try container.encode(legacyName, forKey: .legacyName)
        try container.encode(globalCount, forKey: .globalCount)
        try container.encode(uniqueIdentifier, forKey: .uniqueIdentifier)
        try container.encode(storePrefix, forKey: .storePrefix)
        try container.encode(store, forKey: .store)
        if let revisionSet {
            var set = container.nestedContainer(keyedBy: StoreKey.self, forKey: .revisionSet)
            for (store, revision) in revisionSet { try set.encode(revision, forKey: StoreKey(stringValue: store)) }
        } else {
            try container.encodeNil(forKey: .revisionSet)
        }
        try container.encode(objectChanges, forKey: .objectChanges)
        try container.encode(bytes, forKey: .bytes)
        try container.encodeParts(parts)
        try container.encodeLayers(layers)
    }

    /// Member by member (tuples compared element by element).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        let sameSets: Bool =
            switch (lhs.revisionSet, rhs.revisionSet) {
            case (nil, nil): true
            case let (a?, b?): a.elementsEqual(b) { $0 == $1 }
            default: false
            }
        return lhs.file == rhs.file && lhs.legacyName == rhs.legacyName && lhs.globalCount == rhs.globalCount
            && lhs.uniqueIdentifier == rhs.uniqueIdentifier && lhs.storePrefix == rhs.storePrefix && lhs.store == rhs.store && sameSets
            && lhs.objectChanges == rhs.objectChanges && lhs.bytes == rhs.bytes && sameParts(lhs.parts, rhs.parts) && lhs.layers == rhs.layers
    }
}

extension FolderInspection {
    /// Equal when the ensembles are (the summary follows from them).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.ensembles == rhs.ensembles }
}

extension Ensemble {
    /// The first input read as a cloud folder (an ensemble folder or a root of ensembles), as
    /// typed values: every ensemble, store, event, baseline, data file, piece of debris and
    /// duplicate folder, and every read error (Spec/inspect.md 2.1, 3.1). The same facts as
    /// ``inspect(modelVersion:)`` gives for a folder, which is this value's document. Nothing is
    /// written. Throws a usage error when the input is not such a folder.
    public func inspectFolder() throws(EnsembleError) -> FolderInspection {
        let path = try firstInput()
        let reader = try reader()
        do {
            return try InspectReport.folderInspection(path: path, reader: reader)
        } catch {
            throw EnsembleError(.usage, error)
        }
    }
}
