import ArgumentParser
import Foundation
import EnsemblesToolkit

/// `logtool diff`: two copies of a folder, or two devices' views of one (Spec/diff.md).
struct Diff: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two cloud folders, or two devices' views of one folder (Spec/diff.md).",
        discussion: """
            Reports the files present in one folder only or whose bytes differ, the events one side \
            integrates and the other does not (with the other side's reason), and the merged states' \
            differences by entity, object and property. Prints nothing when they are equal. With one \
            --as-store both folders are seen as that device; with two, A as the first and B as the \
            second; with two and no B, one folder as two devices. Exit status: 0 equal, 1 different, \
            2 usage error or a side that cannot be read or merged (like diff(1)).

            Examples:
              logtool diff mac1/MainStore mac2/MainStore
              logtool diff --json before/MainStore after/MainStore
              logtool diff --as-store STORE-A --as-store STORE-B cloud/MainStore
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @OptionGroup var options: ReadingOptions

    @OptionGroup var modelVersions: ModelVersionOptions

    @Flag(name: .long, help: "Print the differences as one JSON document (Spec/diff.md 6).")
    var json = false

    @Option(
        name: .customLong("as-store"),
        help: ArgumentHelp("See a folder as device STORE does (Spec/merge.md 15); once for both sides, or twice: A, then B.", valueName: "STORE"))
    var views: [String] = []

    @Argument(help: "The first cloud folder (one ensemble).", completion: .directory)
    var a: String

    @Argument(help: "The second cloud folder; without it, A seen as the two --as-store devices.", completion: .directory)
    var b: String?

    func validate() throws {
        try options.validateModelVersion()
        guard views.count <= 2 else { throw ValidationError("--as-store is given at most twice") }
        guard b != nil || views.count == 2 else { throw ValidationError("give a second folder B, or two --as-store views of A") }
    }

    func run() throws {
        let document: JSONValue
        do {
            document = try compare()
        } catch let exit as ToolExit where exit.status == .problemsFound {
            // 1 says "different" (Spec/diff.md 7): every error is 2, as with diff(1).
            throw ToolExit(status: .usage)
        }
        let equal = document[JSONPointer(["equal"])] == .bool(true)
        if json {
            writeJSON(document)
        } else if !equal {
            writeStandardOutput(Self.text(document))
        }
        if !equal { throw ToolExit(status: .problemsFound) }
    }

    private func compare() throws -> JSONValue {
        let reading = try options.ensembleOptions(modelVersions, json: json)
        let first = Ensemble(inputs: [a], options: reading)
        let second = Ensemble(inputs: [b ?? a], options: reading)
        var warnings: [FormatError] = []
        do {
            let document = try first.diff(against: second, asStore: views.first, otherAsStore: views.last, warnings: &warnings)
            for warning in warnings { writeWarning(warning) }
            return document
        } catch {
            for warning in warnings { writeWarning(warning) }
            writeProblems(error.problems, json: json)
            throw ToolExit(status: .usage)
        }
    }

    /// The differences for people (Spec/diff.md 6.1): a line per file, event, object and
    /// property, names escaped (Spec/README.md 4.1), values as JSON text.
    static func text(_ document: JSONValue) -> String {
        func string(_ value: JSONValue?, _ member: String) -> String { value?[JSONPointer([member])]?.stringValue ?? "" }
        func value(_ value: JSONValue?) -> String { TerminalText.escapeControls(JSONWriter().string(value ?? .null)) }
        var lines: [String] = []
        for side in ["a", "b"] {
            let described = document[JSONPointer([side])]
            let view = described?[JSONPointer(["view"])]?.stringValue.map { " as \(escaped($0))" } ?? ""
            lines.append("\(side == "a" ? "---" : "+++") \(side): \(escaped(string(described, "path")))\(view)")
        }
        // Both sides are strict or both are devices here, so their outcomes compare as they are.
        let outcomes = ["a", "b"].map { string(document[JSONPointer([$0])], "outcome") }
        if outcomes[0] != outcomes[1] { lines.append("outcome: a \(outcomes[0]), b \(outcomes[1])") }
        for group in ["registrations", "events", "baselines", "data"] {
            for file in document[JSONPointer(["files", group])]?.arrayValue ?? [] {
                let what = ["only-a": "only in a", "only-b": "only in b", "bytes": "bytes differ"][string(file, "difference")] ?? "?"
                var details: [String] = []
                if let store = file[JSONPointer(["store"])]?.stringValue { details.append("store=\(escaped(store))") }
                if let revision = file[JSONPointer(["revision"])], revision != .null { details.append("revision=\(JSONWriter().string(revision))") }
                let shown = details.isEmpty ? "" : " [\(details.joined(separator: ", "))]"
                lines.append("\(group): \(what): \(escaped(string(file, "path")))\(shown)")
            }
        }
        for event in document[JSONPointer(["events"])]?.arrayValue ?? [] {
            let side = string(event, "integratedBy"), other = side == "a" ? "b" : "a"
            let revision = JSONWriter().string(event[JSONPointer(["revision"])] ?? .null)
            let reason = event[JSONPointer(["reason"])]
            lines.append(
                "event [store=\(escaped(string(event, "store"))), revision=\(revision)] integrated by \(side) only (\(escaped(string(event, "file")))); \(other): \(string(reason, "kind"))"
            )
            for finding in reason?[JSONPointer(["findings"])]?.arrayValue ?? [] { lines.append("  " + FindingLine.render(problem(finding))) }
        }
        for object in document[JSONPointer(["state"])]?.arrayValue ?? [] {
            lines.append("object \(string(object, "change")): \(escaped(string(object, "entity"))) \(escaped(string(object, "id")))")
            for property in object[JSONPointer(["properties"])]?.arrayValue ?? [] {
                let name = escaped(string(property, "name"))
                for (side, sign) in [("a", "-"), ("b", "+")] {
                    guard let shown = property[JSONPointer([side])] else { continue }
                    let setBy = property[JSONPointer([side + "SetBy"])]?.stringValue.map(escaped) ?? "an inverse relationship"
                    lines.append("  \(sign) \(name): \(value(shown)) set by \(setBy)")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A finding of the document as the finding line renders it (Spec/merge.md 5.9).
    static func problem(_ finding: JSONValue) -> IntegrityProblem {
        IntegrityProblem(
            code: FormatError.Code(finding[JSONPointer(["code"])]?.stringValue ?? ""),
            number: finding[JSONPointer(["number"])]?.numberValue?.int64Value.map { Int($0) },
            files: finding[JSONPointer(["files"])]?.arrayValue?.compactMap(\.stringValue) ?? [],
            message: finding[JSONPointer(["message"])]?.stringValue ?? "",
            details: finding[JSONPointer(["details"])]?.objectValue ?? JSONObject())
    }
}
