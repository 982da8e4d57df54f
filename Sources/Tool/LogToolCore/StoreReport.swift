import Foundation
import EnsemblesToolkit

/// `logtool inspect STORE.sqlite` for people (the document: ``Ensemble/inspect(modelVersion:)``).
enum StoreReport {
    /// The same for people: the metadata, then one line per entity.
    static func text(_ report: JSONValue) -> String {
        func field(_ value: JSONValue?, _ key: String) -> JSONValue? { value?[JSONPointer([key])] }
        func shown(_ value: JSONValue?) -> String { InspectText.text(value) }
        var lines = ["Core Data store \(shown(field(report, "path")))"]
        for error in field(report, "errors")?.arrayValue ?? [] {
            lines.append("  error: \(shown(field(error, "code"))): \(shown(field(error, "message")))")
        }
        lines.append("  store type: \(shown(field(report, "storeType")))  UUID: \(shown(field(report, "uuid")))")
        lines.append(
            "  model version identifiers: \(shown(field(report, "modelVersionIdentifiers")))  framework version: \(shown(field(report, "persistenceFrameworkVersion")))"
        )
        lines.append("  other metadata keys: \(shown(field(report, "otherMetadataKeys")))")
        for (style, value) in (field(report, "md5ModelVersions")?.objectValue ?? JSONObject()).members {
            lines.append("  md5 model version (\(style) descriptions): \(shown(value))")
        }
        lines.append("  entities (number, parent, max key, table, rows, version hash in hex):")
        for entity in field(report, "entities")?.arrayValue ?? [] {
            var line = "    \(shown(field(entity, "name")))  #\(shown(field(entity, "number")))"
            if let parent = field(entity, "parent"), parent != .null { line += " : \(shown(parent))" }
            line += "  max \(shown(field(entity, "maxPrimaryKey")))  \(shown(field(entity, "table")))  rows \(shown(field(entity, "rows")))"
            line += "  \(shown(field(entity, "versionHash")))"
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
