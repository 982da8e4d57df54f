import ArgumentParser
import Foundation
import EnsemblesToolkit

/// `logtool history`: how one object got its values (Spec/verify.md, "history").
struct History: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "history",
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

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

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
        let ensemble = Ensemble(inputs: inputs, options: try options.ensembleOptions(modelVersions, json: json))
        let history: ObjectHistory
        var warnings: [FormatError] = []
        defer { for warning in warnings { writeWarning(warning) } }
        do {
            history = try ensemble.history(entity: entity, id: id, warnings: &warnings)
        } catch {
            throw reportAndExit(error, json: json)
        }
        if json {
            writeJSON(history.document)
        } else {
            writeStandardOutput(Self.text(history))
        }
    }

    static func text(_ history: ObjectHistory) -> String {
        var lines = ["History of \(escaped(history.entity)) \(escaped(history.id))"]
        guard !history.changes.isEmpty || history.live else {
            // Not "not live": the object never existed in this history, which is usually a typo.
            lines.append("  no event or baseline changes this object (entity and identifier are compared exactly as written)")
            return lines.joined(separator: "\n") + "\n"
        }
        for change in history.changes {
            var line = "  \(change.change.historyName)"
            if !change.applied { line += " (ignored: the object was not live)" }
            line += "  \(escaped(change.file))  store \(escaped(change.store)) revision \(change.revision) global count \(change.globalCount)"
            lines.append(line)
            for (name, value) in change.properties {
                lines.append("      \(escaped(name)) = \(InspectText.json(value))")
            }
            if !change.concurrentWith.isEmpty { lines.append("      concurrent with \(change.concurrentWith.map(escaped).joined(separator: ", "))") }
        }
        lines.append(history.live ? "Final state:" : "Final state: not live")
        for property in history.finalProperties {
            let by = property.setBy.map(escaped) ?? "an inverse relationship"
            lines.append("  \(escaped(property.name)) = \(InspectText.json(property.value))  (last set by \(by))")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
