import ArgumentParser
import Foundation
import EnsemblesToolkit

/// `logtool history`: how one object got its values (Spec/verify.md, "history").
struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show every change to one object in replay order, and which value won.",
        discussion: """
            INPUT is what `merge` takes. Every change to the object (ENTITY, ID) is listed in replay \
            order with its event, whether it applied, the values it set and the events it was \
            concurrent with; then the final value of each property and the change that set it. Exit \
            status: 0 shown, 1 the inputs do not merge (integrity failure or unreadable file), 2 usage error.

            Examples:
              logtool history --entity Parent --id parent1 cloud/MainStore
              logtool history --entity Parent --id p1 --json --model M.xcdatamodeld cloud
            """
    )

    @OptionGroup var options: ReadingOptions

    @OptionGroup var modelVersions: ModelVersionOptions

    @Option(name: .long, help: "The entity of the object.")
    var entity: String

    @Option(name: .long, help: "The global identifier of the object.")
    var id: String

    @Flag(name: .long, help: "Print the history as JSON.")
    var json = false

    @Argument(help: "Cloud folders, event files or v1 logs.", completion: .file())
    var inputs: [String]

    func validate() throws { try options.validateModelVersion() }

    func run() throws {
        let ensemble = Ensemble(inputs: inputs, options: try options.ensembleOptions(modelVersions))
        let document: JSONValue
        var warnings: [FormatError] = []
        defer { for warning in warnings { writeStandardError("warning: \(escaped(warning))") } }
        do {
            document = try ensemble.history(entity: entity, id: id, warnings: &warnings)
        } catch {
            throw reportAndExit(error, json: json)
        }
        if json {
            writeJSON(document)
        } else {
            writeStandardOutput(Self.text(document))
        }
    }

    static func text(_ document: JSONValue) -> String {
        func field(_ value: JSONValue?, _ key: String) -> JSONValue? { value?[JSONPointer([key])] }
        var lines = ["History of \(InspectText.text(field(document, "entity"))) \(InspectText.text(field(document, "id")))"]
        for change in field(document, "changes")?.arrayValue ?? [] {
            var line = "  \(InspectText.text(field(change, "change")))"
            if field(change, "applied") == .bool(false) { line += " (ignored: the object was not live)" }
            line +=
                "  \(InspectText.text(field(change, "file")))  store \(InspectText.text(field(change, "store"))) revision \(InspectText.text(field(change, "revision"))) global count \(InspectText.text(field(change, "globalCount")))"
            lines.append(line)
            for (name, value) in field(change, "properties")?.objectValue ?? JSONObject() {
                lines.append("      \(escaped(name)) = \(InspectText.json(value))")
            }
            let concurrent = field(change, "concurrentWith")?.arrayValue ?? []
            if !concurrent.isEmpty { lines.append("      concurrent with \(concurrent.map { InspectText.text($0) }.joined(separator: ", "))") }
        }
        let final = field(document, "final")
        lines.append(field(final, "live") == .bool(true) ? "Final state:" : "Final state: not live")
        for (name, entry) in field(final, "properties")?.objectValue ?? JSONObject() {
            let by = field(entry, "setBy").flatMap { $0 == .null ? nil : InspectText.text($0) } ?? "an inverse relationship"
            lines.append("  \(escaped(name)) = \(InspectText.json(field(entry, "value") ?? .null))  (last set by \(by))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
