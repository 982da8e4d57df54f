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
        let listed = changes.map { entry -> JSONValue in
            let concurrent = changes.filter { other in
                other.event.file != entry.event.file && entry.event.event.revisionSet.compare(other.event.event.revisionSet) == .concurrent
            }.map(\.event.file)
            guard case .object(var object) = entry.value else { return entry.value }
            object["concurrentWith"] = .array(sortedUnique(concurrent).map(JSONValue.string))
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
