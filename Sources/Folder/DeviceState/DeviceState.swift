import CoreDataStore
import DataModel
import EnsembleModel
import EventCodecs
import Foundation
import JSONDocument
import KeyedArchive
import SQLiteConnection

/// One `CDEPropertyChangeValue` of an object change (Spec/device-state.md 5.4,
/// device-state-notes.md 3.1).
package struct DeviceProperty: Sendable, Hashable {
    package var name: String
    /// 0 attribute, 1 to-one, 2 to-many, 3 ordered to-many.
    package var type: Int64
    package var value: AttributeValue
    package var filename: String?
    package var relatedIdentifier: String?
    package var added: [String]
    package var removed: [String]
    package var moved: [(index: Int64, identifier: String)]

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.type == rhs.type && lhs.value == rhs.value && lhs.filename == rhs.filename
            && lhs.relatedIdentifier == rhs.relatedIdentifier && lhs.added == rhs.added && lhs.removed == rhs.removed
            && lhs.moved.map(\.index) == rhs.moved.map(\.index) && lhs.moved.map(\.identifier) == rhs.moved.map(\.identifier)
    }

    package func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// As v2 JSON writes a property change (v2-json.md 5.4), members in archive order.
    package var jsonValue: JSONValue {
        var members: [(String, JSONValue)] = [("propertyName", .string(name)), ("type", JSONValue(type))]
        switch type {
        case 0:
            if let filename {
                members.append(("filename", .string(filename)))
            } else {
                members.append(("value", (try? V2JSONEncoder.attributeJSON(value)) ?? .null))
            }
        case 1: members.append(("relatedIdentifier", relatedIdentifier.map(JSONValue.string) ?? .null))
        default:
            members.append(("addedIdentifiers", .array(added.map(JSONValue.string))))
            members.append(("removedIdentifiers", .array(removed.map(JSONValue.string))))
            if type == 3 {
                members.append(("movedIdentifiersByIndex", .object(JSONObject(moved.map { (String($0.index), JSONValue.string($0.identifier)) }))))
            }
        }
        return .object(JSONObject(members))
    }
}

/// One `CDEObjectChange` row.
package struct DeviceChange: Sendable, Hashable {
    package var primaryKey: Int64
    package var entity: String
    package var globalIdentifier: String
    /// 100 insert, 200 update, 300 delete.
    package var type: Int64
    /// Nil when the archive is damaged (Spec/device-state.md 5.5).
    package var properties: [DeviceProperty]?
    /// `ZCDEDATAFILE` names, by primary key.
    package var dataFiles: [String]
}

/// One `CDEStoreModificationEvent` row with its revisions and changes.
package struct DeviceEvent: Sendable, Hashable {
    package var primaryKey: Int64
    package var uniqueIdentifier: String
    /// 0 incomplete, 100 baseline, 200 save, 300 merge.
    package var type: Int64
    package var globalCount: Int64
    package var storeIdentifier: String
    package var revision: Int64
    /// Its own revision and those of `eventRevisionsOfOtherStores`, stores told apart by their
    /// bytes (two spellings of one name in NFC and NFD are two stores).
    package var revisions: RevisionSet
    /// Seconds since 2001-01-01.
    package var timestamp: Double
    package var modelVersion: String?
    /// By primary key.
    package var changes: [DeviceChange]
    /// The store's main file alone, read without its `-wal`, lacks it.
    package var onlyInWal: Bool
}

/// An archive section 3 refused (Spec/device-state.md 5.5).
package struct DamagedArchive: Sendable, Hashable {
    package var table: String
    package var primaryKey: Int64
    package var column: String
    package var event: String
    package var entity: String
    package var globalIdentifier: String
    package var error: FormatError
}

/// Everything a device's folder says about one ensemble (Spec/device-state.md 5.2 to 5.5).
package struct DeviceState: Sendable {
    package var folder: DeviceFolder
    package var info: DeviceStoreInfo
    package var modelVersion: String
    package var walFile: Bool
    /// Row count by entity table.
    package var rows: [String: Int]
    /// In the order of 5.2: global count, store identifier, revision, unique identifier.
    package var events: [DeviceEvent]
    package var dataFiles: [String]
    package var newDataFiles: [String]
    /// Distinct `ZFILENAME` values, UTF-8 order.
    package var referencedDataFiles: [String]
    package var uploadCache: [String]
    package var downloadCache: [String]
    package var damagedArchives: [DamagedArchive]

    /// Reads the folder `path` (an ensemble folder or an event-data root with one ensemble).
    /// Nothing is written beside the user's files: the store is read from a private copy.
    package static func read(_ path: String) throws(FormatError) -> DeviceState {
        let folder = try DeviceFolder.locate(path)
        let info = try DeviceStoreInfo.read(path: folder.storeInfo)
        let (version, contents) = try readStore(folder.eventStore)
        let walFile = DeviceFolder.entryType(folder.eventStore + "-wal") != nil
        var damaged: [DamagedArchive] = []
        var events = try DeviceStoreReader(contents: contents, file: folder.eventStore).events(damaged: &damaged)
        if walFile {
            // The rows the main file holds without the log; when it cannot be read alone, every
            // event is in the log only (Spec/device-state.md 5.4).
            var ignored: [DamagedArchive] = []
            let model = try? ModelXMLReader.parse(Data(version.xml.utf8), displayPath: version.name, versionName: version.name)
            let mainOnly = model.flatMap { try? CoreDataStoreContents.read(path: folder.eventStore, model: $0, includingWAL: false) }
            let identifiers = Set(
                (mainOnly.flatMap { try? DeviceStoreReader(contents: $0, file: folder.eventStore).events(damaged: &ignored) } ?? []).map {
                    ExactString($0.uniqueIdentifier)
                })
            for index in events.indices { events[index].onlyInWal = !identifiers.contains(ExactString(events[index].uniqueIdentifier)) }
        }
        events.sort(by: Self.precedes)
        var rows: [String: Int] = [:]
        for (entity, table) in contents.layout.entities { rows[table.table, default: 0] += contents.rows[entity]?.count ?? 0 }
        let referenced = sortedUnique((contents.rows["CDEDataFile"] ?? []).compactMap { $0.attributes["filename"]?.text })
        return DeviceState(
            folder: folder, info: info, modelVersion: version.name, walFile: walFile, rows: rows, events: events,
            dataFiles: DeviceFolder.fileNames(in: folder.folder + "/data"), newDataFiles: DeviceFolder.fileNames(in: folder.folder + "/newdata"),
            referencedDataFiles: referenced, uploadCache: DeviceFolder.fileNames(in: folder.transitCache + "/upload"),
            downloadCache: DeviceFolder.fileNames(in: folder.transitCache + "/download"), damagedArchives: damaged)
    }

    /// Global count, store identifier (UTF-8), revision, unique identifier (UTF-8).
    static func precedes(_ a: DeviceEvent, _ b: DeviceEvent) -> Bool {
        if a.globalCount != b.globalCount { return a.globalCount < b.globalCount }
        if !exactlyEqual(a.storeIdentifier, b.storeIdentifier) { return utf8Precedes(a.storeIdentifier, b.storeIdentifier) }
        if a.revision != b.revision { return a.revision < b.revision }
        return utf8Precedes(a.uniqueIdentifier, b.uniqueIdentifier)
    }

    /// The store read with the newest model version whose layout it has (Spec/device-state.md 6.3).
    static func readStore(_ path: String) throws(FormatError) -> (version: (name: String, xml: String), contents: CoreDataStoreContents) {
        var firstError: FormatError?
        for version in EventStoreModelSource.versions {
            let model = try ModelXMLReader.parse(Data(version.xml.utf8), displayPath: version.name, versionName: version.name)
            do {
                return (version, try CoreDataStoreContents.read(path: path, model: model))
            } catch  where error.code == .coreDataLayoutMismatch {
                firstError = firstError ?? error
            }
        }
        throw firstError ?? FormatError(.coreDataLayoutMismatch, "no version of CDEEventStoreModel fits", location: .init(file: path))
    }

    // MARK: - Derived facts

    /// The unique identifier of the most recent baseline: greatest global count, then timestamp,
    /// then store identifier (device-state-notes.md 6).
    package var mostRecentBaseline: String? {
        events.filter { $0.type == 100 }.max { a, b in
            if a.globalCount != b.globalCount { return a.globalCount < b.globalCount }
            if a.timestamp != b.timestamp { return a.timestamp < b.timestamp }
            return utf8Precedes(a.storeIdentifier, b.storeIdentifier)
        }?.uniqueIdentifier
    }

    /// Section 5.3: identifier, in the store, listed, mandatory; by identifier.
    package var incompleteEvents: [(identifier: String, inStore: Bool, listed: Bool, mandatory: Bool)] {
        let inStore = Set(events.map { ExactString($0.uniqueIdentifier) })
        let identifiers = Set(events.filter { $0.type == 0 }.map { ExactString($0.uniqueIdentifier) }).union(info.incompleteEvents.keys)
        return identifiers.sorted { utf8Precedes($0.value, $1.value) }.map { identifier in
            (identifier.value, inStore.contains(identifier), info.incompleteEvents[identifier] != nil, info.incompleteEvents[identifier] ?? false)
        }
    }

    /// The identifiers of the mandatory incomplete events (203), UTF-8 order.
    package var mandatoryIncompleteEvents: [String] {
        info.incompleteEvents.filter(\.value).keys.map(\.value).sorted(by: utf8Precedes)
    }

    /// The device's own complete events: its store, types 100, 200 and 300.
    package var ownCompleteEvents: [DeviceEvent] {
        events.filter { exactlyEqual($0.storeIdentifier, info.storeIdentifier) && $0.type != 0 }
    }

    /// The path an event would have in a cloud folder (cloud-layout.md 4).
    package static func cloudFile(of event: DeviceEvent) -> String {
        event.type == 100
            ? "baselines/\(event.globalCount)_\(event.uniqueIdentifier)_\(String(event.storeIdentifier.prefix(8))).cdeevent"
            : "events/\(event.globalCount)_\(event.storeIdentifier)_\(event.revision).cdeevent"
    }

    /// Sections 5.2 to 5.5 as the expected-facts document, with the cloud part and the
    /// forced-deleech conditions the caller computed (5.6, 5.7).
    package func document(cloud: JSONValue, forcedDeleech: [JSONValue]) -> JSONValue {
        func strings(_ list: [String]) -> JSONValue { .array(list.map(JSONValue.string)) }
        var stores: [ExactString: (count: Int64, first: Int64, last: Int64)] = [:]
        for event in events where event.type == 200 || event.type == 300 {
            let known = stores[ExactString(event.storeIdentifier)]
            stores[ExactString(event.storeIdentifier)] = (
                (known?.count ?? 0) + 1, min(known?.first ?? event.revision, event.revision), max(known?.last ?? event.revision, event.revision)
            )
        }
        // Data files by their bytes: two named in NFC and NFD are two files.
        let present = Set((dataFiles + newDataFiles).map(ExactString.init))
        let referenced = Set(referencedDataFiles.map(ExactString.init))
        return .object(
            JSONObject([
                ("ensemble", .string(folder.ensemble)),
                ("storeIdentifier", .string(info.storeIdentifier)),
                ("backendIdentity", .object(JSONObject([("archived", .bool(info.backendIdentityArchived)), ("value", info.backendIdentity)]))),
                ("verifiesStoreRegistrationInCloud", .bool(info.verifiesStoreRegistrationInCloud)),
                ("baselineUsedToConstructStore", info.baselineUsedToConstructStore.map(JSONValue.string) ?? .null),
                ("mostRecentBaseline", mostRecentBaseline.map(JSONValue.string) ?? .null),
                (
                    "eventStore",
                    .object(
                        JSONObject([
                            ("modelVersion", .string(modelVersion)), ("walFile", .bool(walFile)),
                            ("rows", .object(JSONObject(rows.keys.sorted().map { ($0, JSONValue(Int64(rows[$0] ?? 0))) }))),
                        ]))
                ),
                (
                    "incompleteEvents",
                    .array(
                        incompleteEvents.map {
                            .object(
                                JSONObject([
                                    ("uniqueIdentifier", .string($0.identifier)), ("inStore", .bool($0.inStore)), ("listed", .bool($0.listed)),
                                    ("mandatory", .bool($0.mandatory)),
                                ]))
                        })
                ),
                ("events", .array(events.map(Self.eventJSON))),
                (
                    "stores",
                    .object(
                        JSONObject(
                            stores.keys.sorted { utf8Precedes($0.value, $1.value) }.map { store in
                                let facts = stores[store] ?? (0, 0, 0)
                                return (
                                    store.value,
                                    .object(
                                        JSONObject([
                                            ("events", JSONValue(facts.count)), ("firstRevision", JSONValue(facts.first)),
                                            ("lastRevision", JSONValue(facts.last)),
                                        ]))
                                )
                            }))
                ),
                (
                    "dataFiles",
                    .object(
                        JSONObject([
                            ("data", strings(dataFiles)), ("newdata", strings(newDataFiles)), ("referenced", strings(referencedDataFiles)),
                            ("missing", strings(referencedDataFiles.filter { !present.contains(ExactString($0)) })),
                            ("unreferenced", strings(dataFiles.filter { !referenced.contains(ExactString($0)) })),
                        ]))
                ),
                ("transitCache", .object(JSONObject([("upload", strings(uploadCache)), ("download", strings(downloadCache))]))),
                (
                    "damagedArchives",
                    .array(
                        damagedArchives.map {
                            .object(
                                JSONObject([
                                    ("table", .string($0.table)), ("primaryKey", JSONValue($0.primaryKey)), ("column", .string($0.column)),
                                    ("event", .string($0.event)), ("entity", .string($0.entity)), ("globalIdentifier", .string($0.globalIdentifier)),
                                    ("code", .string($0.error.code.rawValue)), ("pointer", .string($0.error.location.pointer?.description ?? "")),
                                ]))
                        })
                ),
                ("cloud", cloud),
                ("forcedDeleech", .array(forcedDeleech)),
            ]))
    }

    /// One event of 5.4.
    static func eventJSON(_ event: DeviceEvent) -> JSONValue {
        var byEntity: [(String, [JSONValue])] = []
        for change in event.changes {
            var members: [(String, JSONValue)] = [("globalIdentifier", .string(change.globalIdentifier)), ("type", JSONValue(change.type))]
            if let properties = change.properties, !properties.isEmpty { members.append(("properties", .array(properties.map(\.jsonValue)))) }
            if !change.dataFiles.isEmpty { members.append(("dataFiles", .array(change.dataFiles.map(JSONValue.string)))) }
            if let index = byEntity.firstIndex(where: { exactlyEqual($0.0, change.entity) }) {
                byEntity[index].1.append(.object(JSONObject(members)))
            } else {
                byEntity.append((change.entity, [.object(JSONObject(members))]))
            }
        }
        return .object(
            JSONObject([
                ("uniqueIdentifier", .string(event.uniqueIdentifier)), ("type", JSONValue(event.type)), ("globalCount", JSONValue(event.globalCount)),
                ("storeIdentifier", .string(event.storeIdentifier)), ("revision", JSONValue(event.revision)),
                (
                    "revisionsByStoreIdentifier",
                    .object(JSONObject(event.revisions.revisions.map { ($0.store, JSONValue($0.revision)) }))
                ),
                ("timestamp", .string(CanonicalNumberFormat.double(event.timestamp))), ("objectChanges", JSONValue(Int64(event.changes.count))),
                ("onlyInWal", .bool(event.onlyInWal)), ("changesByEntity", .object(JSONObject(byEntity.map { ($0.0, .array($0.1)) }))),
            ]))
    }
}

/// Turns the rows of CDEEventStoreModel into events (Spec/device-state.md 6.3).
struct DeviceStoreReader {
    let contents: CoreDataStoreContents
    let file: String

    func rows(_ entity: String) -> [Int64: CoreDataRow] {
        Dictionary((contents.rows[entity] ?? []).map { ($0.id.primaryKey, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func events(damaged: inout [DamagedArchive]) throws(FormatError) -> [DeviceEvent] {
        let revisions = rows("CDEEventRevision"), changes = rows("CDEObjectChange"), identifiers = rows("CDEGlobalIdentifier"), files = rows("CDEDataFile")
        let eventTable = contents.layout.entities["CDEStoreModificationEvent"]?.table ?? "ZCDESTOREMODIFICATIONEVENT"
        let changeTable = contents.layout.entities["CDEObjectChange"]?.table ?? "ZCDEOBJECTCHANGE"
        var events: [DeviceEvent] = []
        for row in contents.rows["CDEStoreModificationEvent"] ?? [] {
            let key = row.id.primaryKey
            func invalid(_ column: String, _ message: String) -> FormatError {
                FormatError(.eventDataInvalidEvent, message, location: .init(file: file, pointer: .root / eventTable / String(key) / column))
            }
            guard let own = row.toOne["eventRevision"].flatMap({ revisions[$0.primaryKey] }), let store = own.attributes["persistentStoreIdentifier"]?.text,
                let revision = own.attributes["revisionNumber"]?.integer
            else { throw invalid("ZEVENTREVISION", "the event has no own revision (store and number)") }
            guard let identifier = row.attributes["uniqueIdentifier"]?.text else { throw invalid("ZUNIQUEIDENTIFIER", "the event has no unique identifier") }
            guard let type = row.attributes["type"]?.integer, [0, 100, 200, 300].contains(type) else {
                throw invalid("ZTYPE", "the event's type is not 0, 100, 200 or 300")
            }
            var pairs = [(store, revision)]
            for other in row.toMany["eventRevisionsOfOtherStores"] ?? [] {
                guard let otherRow = revisions[other.primaryKey], let otherStore = otherRow.attributes["persistentStoreIdentifier"]?.text,
                    let number = otherRow.attributes["revisionNumber"]?.integer
                else { continue }
                pairs.append((otherStore, number))
            }
            let revisionSet = RevisionSet(pairs: pairs)
            var eventChanges: [DeviceChange] = []
            for changeID in row.toMany["objectChanges"] ?? [] {
                guard let change = changes[changeID.primaryKey] else { continue }
                let globalIdentifier = change.toOne["globalIdentifier"].flatMap { identifiers[$0.primaryKey]?.attributes["globalIdentifier"]?.text } ?? ""
                let entity = change.attributes["nameOfEntity"]?.text ?? ""
                var properties: [DeviceProperty]? = []
                switch change.attributes["propertyChangeValues"] {
                case .blob(let bytes)?:
                    do {
                        properties = try Self.properties(bytes)
                    } catch {
                        properties = nil
                        damaged.append(
                            DamagedArchive(
                                table: changeTable, primaryKey: changeID.primaryKey, column: "ZPROPERTYCHANGEVALUES", event: identifier, entity: entity,
                                globalIdentifier: globalIdentifier, error: error))
                    }
                case .null?, nil: break
                default:
                    properties = nil
                    damaged.append(
                        DamagedArchive(
                            table: changeTable, primaryKey: changeID.primaryKey, column: "ZPROPERTYCHANGEVALUES", event: identifier, entity: entity,
                            globalIdentifier: globalIdentifier,
                            error: FormatError(.archiveNotPropertyList, "the column holds no blob", location: .init(offset: 0))))
                }
                let names = (change.toMany["dataFiles"] ?? []).compactMap { files[$0.primaryKey]?.attributes["filename"]?.text }
                eventChanges.append(
                    DeviceChange(
                        primaryKey: changeID.primaryKey, entity: entity, globalIdentifier: globalIdentifier, type: change.attributes["type"]?.integer ?? 0,
                        properties: properties, dataFiles: names))
            }
            events.append(
                DeviceEvent(
                    primaryKey: key, uniqueIdentifier: identifier, type: type, globalCount: row.attributes["globalCount"]?.integer ?? 0,
                    storeIdentifier: store, revision: revision, revisions: revisionSet, timestamp: row.attributes["timestamp"]?.real ?? 0,
                    modelVersion: row.attributes["modelVersion"]?.text, changes: eventChanges, onlyInWal: false))
        }
        return events
    }

    /// The property changes of one archive: an array of `CDEPropertyChangeValue`s (device-state-notes.md 3.1).
    static func properties(_ bytes: [UInt8]) throws(FormatError) -> [DeviceProperty] {
        let archive = try KeyedArchiveReader(classes: .ensembles).read(bytes)
        let rootPointer = JSONPointer.root / "$top" / "root"
        guard let elements = archive.root?.elements else {
            throw FormatError(.archiveInvalidObject, "the root is not an array of property changes", at: rootPointer)
        }
        var properties: [DeviceProperty] = []
        for (index, element) in elements.enumerated() {
            let pointer = rootPointer / index
            guard case .object(let object) = element, ExactString(object.className) == ExactString("CDEPropertyChangeValue"),
                let name = object.members["propertyName"]?.string, case .integer(let type)? = object.members["type"], (0...3).contains(type)
            else { throw FormatError(.archiveInvalidObject, "not a CDEPropertyChangeValue with a propertyName and a type 0 to 3", at: pointer) }
            guard let value = attributeValue(object.members["value"] ?? .null) else {
                throw FormatError(.archiveInvalidObject, "a value of a kind no attribute has", at: pointer / "value")
            }
            func identifiers(_ key: String) -> [String] { object.members[key]?.elements?.compactMap(\.string) ?? [] }
            let moved = (object.members["movedIdentifiersByIndex"]?.pairs ?? []).compactMap { pair -> (index: Int64, identifier: String)? in
                guard case .integer(let index) = pair.key, let identifier = pair.value.string else { return nil }
                return (index, identifier)
            }
            properties.append(
                DeviceProperty(
                    name: name, type: type, value: value, filename: object.members["filename"]?.string,
                    relatedIdentifier: object.members["relatedIdentifier"]?.string, added: identifiers("addedIdentifiers"),
                    removed: identifiers("removedIdentifiers"), moved: moved))
        }
        return properties
    }

    /// An archived attribute value as v2's typed value; nil for a collection or an object.
    static func attributeValue(_ value: ArchivedValue) -> AttributeValue? {
        switch value {
        case .null: .null
        case .bool(let flag): .bool(flag)
        case .integer(let number): .integer(number)
        case .real(let number): .double(number)
        case .string(let text): .string(text)
        case .data(let bytes): .binary(Data(bytes))
        // Seconds from 2001 to milliseconds from 1970 (v2-json.md 5.5).
        case .date(let seconds): .date(millisecondsSince1970: (seconds + 978_307_200) * 1000)
        case .uuid(let uuid): .uuid(uuid)
        case .url(_, let relative): .url(relative)
        default: nil
        }
    }
}

extension SQLValue {
    var text: String? {
        guard case .text(let value) = self else { return nil }
        return value
    }

    /// An integer, or a real with no fraction.
    var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .real(let value) where value == value.rounded() && abs(value) < 9e18: Int64(value)
        default: nil
        }
    }

    /// A real, or an integer as that many (Spec/device-state.md 5.4: a whole TIMESTAMP is stored as an integer).
    var real: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }
}

extension DeviceEvent {
    /// The event as a v2 event (Spec/device-state.md 7): its header, its revision set and its
    /// object changes with their property changes and data files. A change whose archive is
    /// damaged cannot be converted without losing it: nil is returned with that change's key.
    package func v2Event() -> (event: Event?, damagedChange: Int64?) {
        guard let type = EventType(rawValue: type), type != .incomplete else { return (nil, nil) }
        var changes: [ObjectChange] = []
        for change in self.changes {
            guard let properties = change.properties, let changeType = ChangeType(rawValue: change.type) else { return (nil, change.primaryKey) }
            let propertyChanges = properties.map { property -> PropertyChange in
                let value: PropertyChange.Value
                switch property.type {
                case 0: value = property.filename.map { .attributeInDataFile(filename: $0) } ?? .attribute(property.value)
                case 1: value = .toOne(relatedIdentifier: property.relatedIdentifier)
                case 2: value = .toMany(added: property.added, removed: property.removed)
                default:
                    value = .orderedToMany(
                        added: property.added, removed: property.removed,
                        movedByIndex: Dictionary(property.moved.map { (Int($0.index), $0.identifier) }, uniquingKeysWith: { first, _ in first }))
                }
                return PropertyChange(name: property.name, value: value)
            }
            changes.append(
                ObjectChange(
                    entity: change.entity, globalIdentifier: change.globalIdentifier, type: changeType, propertyChanges: propertyChanges,
                    dataFiles: change.dataFiles))
        }
        var revisionSet = revisions
        revisionSet[storeIdentifier] = revision
        return (
            Event(
                uniqueIdentifier: uniqueIdentifier, type: type, storeIdentifier: storeIdentifier, globalCount: globalCount,
                timestamp: timestamp, modelVersion: modelVersion, revisionSet: revisionSet, objectChanges: changes),
            nil
        )
    }
}
