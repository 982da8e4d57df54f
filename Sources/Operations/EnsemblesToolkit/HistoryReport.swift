import Foundation
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import MergeEngine

extension Ensemble {
    /// Every change to one object in replay order, whether it applied, the events it was
    /// concurrent with, and which change set each final value (Spec/verify.md, "history").
    public func history(entity: String, id: String, warnings: inout [FormatError]) throws(EnsembleError) -> JSONValue {
        let (input, analysis) = try analyze(warnings: &warnings)
        guard analysis.problems.isEmpty else { throw EnsembleError(kind: .integrity, problems: analysis.problems) }
        do {
            return try HistoryReport.history(of: entity, id: id, analysis: analysis, model: input.model)
        } catch {
            throw EnsembleError(.failure, error)
        }
    }
}

/// Builds the history document by replaying the merge while watching one object.
enum HistoryReport {
    /// Replays the merge, watching one object.
    static func history(of entity: String, id: String, analysis: MergeAnalysis, model: DataModel?) throws(FormatError) -> JSONValue {
        var state = StoreState(model: model)
        state.watch(entity: entity, id: id)
        var changes: [(event: SourcedEvent, value: JSONValue)] = []
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
                changes.append(
                    (
                        sourced,
                        .object(
                            JSONObject([
                                ("file", .string(sourced.file)),
                                ("store", .string(sourced.event.storeIdentifier)),
                                ("revision", JSONValue(sourced.event.revision)),
                                ("globalCount", JSONValue(sourced.event.globalCount)),
                                ("timestamp", JSONValue(sourced.event.timestamp)),
                                ("eventType", JSONValue(sourced.event.type.rawValue)),
                                ("baseline", .bool(baselineFiles.contains(sourced.file))),
                                ("change", .string(change.type == .insert ? "insert" : change.type == .update ? "update" : "delete")),
                                ("applied", .bool(liveInEvent)),
                                ("properties", .object(properties)),
                            ]))
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
            // Files that are canonically equivalent count as the same file, as they always have.
            JSONValue.array(sortedUnique(others.map { files[$0] }.filter { $0 != files[index] }).map(JSONValue.string))
        }
        let listed = changes.map { entry -> JSONValue in
            guard case .object(var object) = entry.value, let index = eventOf[ExactString(entry.event.file)] else { return entry.value }
            object["concurrentWith"] = concurrent[index]
            return .object(object)
        }
        var final = JSONObject()
        for property in try state.properties(entity: entity, id: id) ?? [] {
            final[property.name] = .object(
                JSONObject([
                    ("value", property.value),
                    ("setBy", (state.provenance[property.name] ?? nil).map(JSONValue.string) ?? .null),
                ]))
        }
        return .object(
            JSONObject([
                ("historyVersion", JSONValue(Int64(1))),
                ("kind", .string("history")),
                ("entity", .string(entity)),
                ("id", .string(id)),
                ("changes", .array(listed)),
                ("final", .object(JSONObject([("live", .bool(state.isLive(entity: entity, id: id))), ("properties", .object(final))]))),
            ]))
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
