import ArgumentParser
import Foundation
import JSONDocument
import EnsembleModel
import EventCodecs
import MergeEngine
import CloudFolder
import DataModel

/// `logtool history`: how one object got its values (Spec/verify.md, "history").
struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show every change to one object in replay order, and which value won.",
        discussion: """
        INPUT is what `merge` takes. Every change to the object (ENTITY, ID) is listed in replay \\
        order with its event, whether it applied, the values it set and the events it was \\
        concurrent with; then the final value of each property and the change that set it. Exit \\
        status: 0 shown, 1 the inputs do not merge (integrity failure or unreadable file), 2 usage error.
        """
    )

    @OptionGroup var options: ReadingOptions

    @Option(name: .long, help: "The entity of the object.")
    var entity: String

    @Option(name: .long, help: "The global identifier of the object.")
    var id: String

    @Flag(name: .long, help: "Print the history as JSON.")
    var json = false

    @Argument(help: "Cloud folders, event files or v1 logs.")
    var inputs: [String]

    func validate() throws { try options.validateModelVersion() }

    func run() throws {
        let reader = try options.reader()
        let input = try MergeInputs.gather(inputs, reader: reader)
        let analysis = MergeEngine.analyze(input)
        guard analysis.problems.isEmpty else {
            for problem in analysis.problems {
                writeStandardError("\(problem.code)\(problem.number.map { " (\($0))" } ?? "") \(problem.files.joined(separator: ", ")): \(problem.message)")
            }
            throw ToolExit(status: .problemsFound)
        }
        let document = try Self.history(of: entity, id: id, analysis: analysis, model: input.model)
        if json {
            writeJSON(document)
        } else {
            writeStandardOutput(Self.text(document))
        }
    }

    /// Replays the merge, watching one object.
    static func history(of entity: String, id: String, analysis: MergeAnalysis, model: DataModel?) throws -> JSONValue {
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
                changes.append((sourced, .object(JSONObject([
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
                ]))))
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
            final[property.name] = .object(JSONObject([
                ("value", property.value),
                ("setBy", (state.provenance[property.name] ?? nil).map(JSONValue.string) ?? .null),
            ]))
        }
        return .object(JSONObject([
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
    static func json(_ value: PropertyChange.Value) throws -> JSONValue {
        func ids(_ list: [String]) -> JSONValue { .array(list.map(JSONValue.string)) }
        switch value {
        case .attribute(let attribute): return try V2JSONEncoder.attributeJSON(attribute)
        case .attributeInDataFile(let name): return .array([.string("dataFile"), .string(name)])
        case .toOne(let related): return related.map(JSONValue.string) ?? .null
        case .toMany(let added, let removed): return .object(JSONObject([("added", ids(added)), ("removed", ids(removed))]))
        case .orderedToMany(let added, let removed, let moved):
            return .object(JSONObject([("added", ids(added)), ("removed", ids(removed)),
                                       ("moved", .object(JSONObject(moved.map { (String($0.key), .string($0.value)) })))]))
        }
    }

    static func text(_ document: JSONValue) -> String {
        func field(_ value: JSONValue?, _ key: String) -> JSONValue? { value?[JSONPointer([key])] }
        var lines = ["History of \(InspectText.text(field(document, "entity"))) \(InspectText.text(field(document, "id")))"]
        for change in field(document, "changes")?.arrayValue ?? [] {
            var line = "  \(InspectText.text(field(change, "change")))"
            if field(change, "applied") == .bool(false) { line += " (ignored: the object was not live)" }
            line += "  \(InspectText.text(field(change, "file")))  store \(InspectText.text(field(change, "store"))) revision \(InspectText.text(field(change, "revision"))) global count \(InspectText.text(field(change, "globalCount")))"
            lines.append(line)
            for (name, value) in field(change, "properties")?.objectValue ?? JSONObject() {
                lines.append("      \(name) = \(JSONWriter().string(value))")
            }
            let concurrent = field(change, "concurrentWith")?.arrayValue ?? []
            if !concurrent.isEmpty { lines.append("      concurrent with \(concurrent.map { InspectText.text($0) }.joined(separator: ", "))") }
        }
        let final = field(document, "final")
        lines.append(field(final, "live") == .bool(true) ? "Final state:" : "Final state: not live")
        for (name, entry) in field(final, "properties")?.objectValue ?? JSONObject() {
            let by = field(entry, "setBy").flatMap { $0 == .null ? nil : InspectText.text($0) } ?? "an inverse relationship"
            lines.append("  \(name) = \(JSONWriter().string(field(entry, "value") ?? .null))  (last set by \(by))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
