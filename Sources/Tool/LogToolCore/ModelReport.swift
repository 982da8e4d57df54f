import Foundation
import EnsemblesToolkit

/// `logtool inspect MODEL` for people (the document: ``Ensemble/inspect(modelVersion:)``).
enum ModelReport {
    /// Entities with their properties, one line each, for people.
    static func text(_ report: JSONValue) -> String {
        var lines: [String] = []
        func field(_ value: JSONValue?, _ key: String) -> JSONValue? { value?[JSONPointer([key])] }
        lines.append("Model \(InspectText.text(field(report, "path")))")
        lines.append(
            "  versions: \(InspectText.text(field(report, "versions")))  current: \(InspectText.text(field(report, "currentVersion")))  shown: \(InspectText.text(field(report, "version")))"
        )
        lines.append("  model hash: \(InspectText.text(field(report, "modelHash")))")
        let entities = field(field(report, "model"), "entities")?.objectValue ?? JSONObject()
        for (name, entity) in entities.members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            var title = "  Entity \(escaped(name))"
            if let parent = field(entity, "parent"), parent != .null { title += " : \(InspectText.text(parent))" }
            if field(entity, "abstract") == .bool(true) { title += " (abstract)" }
            lines.append(title)
            for (attribute, details) in (field(entity, "attributes")?.objectValue ?? JSONObject()).members.sorted(by: {
                $0.key.utf8.lexicographicallyPrecedes($1.key.utf8)
            }) {
                var line = "    \(escaped(attribute)): \(InspectText.text(field(details, "type")))"
                if field(details, "optional") == .bool(true) { line += "?" }
                if field(details, "transient") == .bool(true) { line += " transient" }
                if field(details, "externalStorage") == .bool(true) { line += " external storage" }
                lines.append(line)
            }
            for (relationship, details) in (field(entity, "relationships")?.objectValue ?? JSONObject()).members.sorted(by: {
                $0.key.utf8.lexicographicallyPrecedes($1.key.utf8)
            }) {
                let toMany = field(details, "toMany") == .bool(true)
                let ordered = field(details, "ordered") == .bool(true)
                var line =
                    "    \(escaped(relationship)) -> \(toMany ? (ordered ? "ordered " : "") + "[" : "")\(InspectText.text(field(details, "destination")))\(toMany ? "]" : "")"
                if let inverse = field(details, "inverse"), inverse != .null { line += " inverse \(InspectText.text(inverse))" }
                line += " (\(InspectText.text(field(details, "deletionRule"))))"
                lines.append(line)
            }
        }
        for error in field(report, "errors")?.arrayValue ?? [] {
            var place = InspectText.text(field(error, "file"))
            if let line = field(error, "line"), line != .null { place += ":\(InspectText.text(line))" }
            lines.append("  error: \(place): \(InspectText.text(field(error, "message"))) [\(InspectText.text(field(error, "code")))]")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
