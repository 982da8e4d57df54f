import Foundation
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import MergeEngine

extension Ensemble {
    /// Every change to one object in replay order, whether it applied, the events it was
    /// concurrent with, and which change set each final value (Spec/verify.md, "history").
    public func history(entity: String, id: String, warnings: inout [FormatError]) throws(EnsembleError) -> ObjectHistory {
        let (input, analysis) = try analyze(warnings: &warnings)
        guard analysis.problems.isEmpty else { throw EnsembleError(kind: .integrity, problems: analysis.problems) }
        do {
            return try HistoryReport.history(of: entity, id: id, analysis: analysis, model: input.model)
        } catch {
            throw EnsembleError(.failure, error)
        }
    }
}

/// How one object got its values: the result of ``Ensemble/history(entity:id:warnings:)``.
/// It encodes (`Codable`) to the document of Spec/schemas/history.schema.json.
public struct ObjectHistory: Sendable, Hashable {
    public var entity: String
    public var id: String
    /// Every change to the object, in replay order.
    public var changes: [Change]
    /// Whether the object exists after the whole replay.
    public var live: Bool
    /// The object's properties after the replay, in the state document's order (a decoded
    /// history has them in the order its `Decoder` reports an object's keys).
    public var finalProperties: [FinalProperty]

    /// One object change and the event it came from.
    public struct Change: Sendable, Hashable {
        /// The event file, as the folder reader names it.
        public var file: String
        public var store: String
        public var revision: Int64
        public var globalCount: Int64
        public var timestamp: Double
        public var eventType: EventType
        /// Whether the event is a baseline taking part in the merge.
        public var baseline: Bool
        public var change: ChangeType
        /// False when the object was not live, so the change was ignored (Spec/merge.md).
        public var applied: Bool
        /// The values set: attribute values as in the state document, to-many changes as their
        /// added, removed (and moved) identifiers.
        public var properties: JSONObject
        /// The files of the events concurrent with this one's event (Spec/verify.md 10).
        public var concurrentWith: [String]
    }

    /// A property's final value and the event file that set it (nil: set through an inverse
    /// relationship).
    public struct FinalProperty: Sendable, Hashable {
        public var name: String
        public var value: JSONValue
        public var setBy: String?
    }

    /// The history document exactly as `logtool history --json` writes it.
    package var document: JSONValue {
        .object(
            JSONObject([
                ("historyVersion", JSONValue(Int64(1))),
                ("kind", .string("history")),
                ("entity", .string(entity)),
                ("id", .string(id)),
                ("changes", .array(changes.map(\.document))),
                (
                    "final",
                    .object(
                        JSONObject([
                            ("live", .bool(live)),
                            (
                                "properties",
                                .object(
                                    JSONObject(
                                        finalProperties.map {
                                            ($0.name, .object(JSONObject([("value", $0.value), ("setBy", $0.setBy.map(JSONValue.string) ?? .null)])))
                                        }))
                            ),
                        ]))
                ),
            ]))
    }
}

extension ObjectHistory.Change {
    var document: JSONValue {
        .object(
            JSONObject([
                ("file", .string(file)),
                ("store", .string(store)),
                ("revision", JSONValue(revision)),
                ("globalCount", JSONValue(globalCount)),
                ("timestamp", JSONValue(timestamp)),
                ("eventType", JSONValue(eventType.rawValue)),
                ("baseline", .bool(baseline)),
                ("change", .string(change.historyName)),
                ("applied", .bool(applied)),
                ("properties", .object(properties)),
                ("concurrentWith", .array(concurrentWith.map(JSONValue.string))),
            ]))
    }
}

extension ObjectHistory: Codable {
    enum CodingKeys: String, CodingKey { case historyVersion, kind, entity, id, changes, final }
    enum FinalKeys: String, CodingKey { case live, properties }

    public init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: CodingKeys.self)
        guard try keyed.decode(Int64.self, forKey: .historyVersion) == 1, try keyed.decode(String.self, forKey: .kind) == "history" else {
            throw DecodingError.dataCorruptedError(forKey: .kind, in: keyed, debugDescription: "not a history document of version 1")
        }
        entity = try keyed.decode(String.self, forKey: .entity)
        id = try keyed.decode(String.self, forKey: .id)
        changes = try keyed.decode([Change].self, forKey: .changes)
        let final = try keyed.nestedContainer(keyedBy: FinalKeys.self, forKey: .final)
        live = try final.decode(Bool.self, forKey: .live)
        finalProperties = try final.decode(JSONObject.self, forKey: .properties).map { name, entry in
            FinalProperty(name: name, value: entry.objectValue?["value"] ?? .null, setBy: entry.objectValue?["setBy"]?.stringValue)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try document.encode(to: encoder)
    }
}

extension ObjectHistory.Change: Codable {
    enum CodingKeys: String, CodingKey {
        case file, store, revision, globalCount, timestamp, eventType, baseline, change, applied, properties, concurrentWith
    }

    public init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: CodingKeys.self)
        file = try keyed.decode(String.self, forKey: .file)
        store = try keyed.decode(String.self, forKey: .store)
        revision = try keyed.decode(Int64.self, forKey: .revision)
        globalCount = try keyed.decode(Int64.self, forKey: .globalCount)
        timestamp = try keyed.decode(Double.self, forKey: .timestamp)
        guard let type = EventType(rawValue: try keyed.decode(Int64.self, forKey: .eventType)) else {
            throw DecodingError.dataCorruptedError(forKey: .eventType, in: keyed, debugDescription: "not an event type")
        }
        eventType = type
        baseline = try keyed.decode(Bool.self, forKey: .baseline)
        let name = try keyed.decode(String.self, forKey: .change)
        guard let kind = ChangeType.allCases.first(where: { $0.historyName == name }) else {
            throw DecodingError.dataCorruptedError(forKey: .change, in: keyed, debugDescription: "not insert, update or delete")
        }
        change = kind
        applied = try keyed.decode(Bool.self, forKey: .applied)
        properties = try keyed.decode(JSONObject.self, forKey: .properties)
        concurrentWith = try keyed.decode([String].self, forKey: .concurrentWith)
    }

    public func encode(to encoder: any Encoder) throws {
        try document.encode(to: encoder)
    }
}

extension ChangeType {
    /// The name the history document gives the change.
    package var historyName: String {
        switch self {
        case .insert: "insert"
        case .update: "update"
        case .delete: "delete"
        }
    }
}

/// Builds an object's history by replaying the merge while watching one object.
enum HistoryReport {
    /// Replays the merge, watching one object.
    static func history(of entity: String, id: String, analysis: MergeAnalysis, model: DataModel?) throws(FormatError) -> ObjectHistory {
        var state = StoreState(model: model)
        state.watch(entity: entity, id: id)
        var changes: [(event: SourcedEvent, change: ObjectHistory.Change)] = []
        let baselineFiles = Set(analysis.baselines.map(\.file))
        for sourced in try analysis.baselines + analysis.replayedEvents() {
            let mine = sourced.event.objectChanges.filter {
                ExactString($0.entity) == ExactString(entity) && ExactString($0.globalIdentifier) == ExactString(id)
            }
            // Phase A makes the object live for the rest of the event when the event inserts it.
            let liveInEvent = state.isLive(entity: entity, id: id) || mine.contains { $0.type == .insert }
            state.currentSource = sourced.file
            state.apply(sourced.event)
            // Listed as the phases run them: inserts and updates in change order, then deletes.
            for change in mine.filter({ $0.type != .delete }) + mine.filter({ $0.type == .delete }) {
                var properties = JSONObject()
                for property in change.propertyChanges { properties[property.name] = try Self.json(property.value) }
                let event = sourced.event
                changes.append(
                    (
                        sourced,
                        ObjectHistory.Change(
                            file: sourced.file, store: event.storeIdentifier, revision: event.revision, globalCount: event.globalCount,
                            timestamp: event.timestamp, eventType: event.type, baseline: baselineFiles.contains(sourced.file), change: change.type,
                            applied: liveInEvent, properties: properties, concurrentWith: [])
                    ))
            }
        }
        // Events, not changes, are compared: an event's changes share its concurrent events.
        var eventOf: [ExactString: Int] = [:]
        var events: [Event] = []
        var files: [String] = []
        for entry in changes where eventOf[ExactString(entry.event.file)] == nil {
            eventOf[ExactString(entry.event.file)] = events.count
            events.append(entry.event.event)
            files.append(entry.event.file)
        }
        let concurrent = ConcurrentEvents.find(events).enumerated().map { index, others in
            // By bytes: a file named in NFD is not the file named in NFC (Spec/README.md 4).
            sortedUnique(others.map { files[$0] }.filter { !exactlyEqual($0, files[index]) })
        }
        let listed = changes.map { entry in
            var change = entry.change
            if let index = eventOf[ExactString(entry.event.file)] { change.concurrentWith = concurrent[index] }
            return change
        }
        let final = try (state.properties(entity: entity, id: id) ?? []).map { property in
            ObjectHistory.FinalProperty(name: property.name, value: property.value, setBy: state.provenance(ofProperty: property.name) ?? nil)
        }
        return ObjectHistory(entity: entity, id: id, changes: listed, live: state.isLive(entity: entity, id: id), finalProperties: final)
    }

    /// A property change as the history shows it: attribute values as in the state document,
    /// to-many changes as their added, removed (and moved) identifiers.
    static func json(_ value: PropertyChange.Value) throws(FormatError) -> JSONValue {
        func ids(_ list: [String]) -> JSONValue { .array(list.map(JSONValue.string)) }
        switch value {
        case .attribute(let attribute): return try V2JSONEncoder.attributeJSON(attribute)
        case .attributeInDataFile(let name): return .array([.string("dataFile"), .string(name)])
        case .toOne(let related): return related.map(JSONValue.string) ?? .null
        case .toMany(let added, let removed): return .object(JSONObject([("added", ids(added)), ("removed", ids(removed))]))
        case .orderedToMany(let added, let removed, let moved):
            return .object(
                JSONObject([
                    ("added", ids(added)), ("removed", ids(removed)),
                    ("moved", .object(JSONObject(moved.map { (String($0.key), .string($0.value)) }))),
                ]))
        }
    }

}

/// Which events are concurrent with which (Spec/verify.md 10), without comparing every
/// pair: 10,000 changes to one object took 77 s that way (Benchmarks/README.md).
///
/// The events are split into chains, sequences in which each event's revision set covers the
/// one before (a store's own events, in revision order, normally form one). In a chain, the
/// events an event covers come first and those that cover it last, so the events concurrent
/// with it are one run between two binary searches. The work grows with events times chains,
/// plus the pairs reported.
package enum ConcurrentEvents {
    /// For each event, the positions of the events concurrent with it, by chain.
    package static func find(_ events: [Event]) -> [[Int]] {
        let order = events.indices.sorted { a, b in
            let x = events[a], y = events[b]
            if ExactString(x.storeIdentifier) != ExactString(y.storeIdentifier) { return utf8Precedes(x.storeIdentifier, y.storeIdentifier) }
            if x.revision != y.revision { return x.revision < y.revision }
            return a < b
        }
        var chains: [[Int]] = []
        var openChain: [ExactString: Int] = [:]
        for index in order {
            let store = ExactString(events[index].storeIdentifier)
            if let chain = openChain[store], let last = chains[chain].last, events[index].revisionSet.covers(events[last].revisionSet) {
                chains[chain].append(index)
            } else {
                openChain[store] = chains.count
                chains.append([index])
            }
        }
        return events.indices.map { index in
            let set = events[index].revisionSet
            var result: [Int] = []
            for chain in chains {
                // The events this one covers form a prefix of the chain, those covering it a suffix.
                let covered = partitionPoint(chain.count) { !set.covers(events[chain[$0]].revisionSet) }
                let covering = partitionPoint(chain.count) { events[chain[$0]].revisionSet.covers(set) }
                if covered < covering { result += chain[covered..<covering] }
            }
            return result
        }
    }

}
