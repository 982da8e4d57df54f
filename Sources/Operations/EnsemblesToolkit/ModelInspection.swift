import Foundation
import JSONDocument
import DataModel

/// The model document of `inspect` (Spec/inspect.md): a model's versions, the one chosen, its
/// description and hash, or why it could not be read.
package enum ModelInspection {
    static func report(path: String, version: String?) -> JSONValue {
        var versions: [String] = []
        var current: String?
        var chosen: String?
        var model: DataModel?
        var errors: [FormatError] = []
        do {
            let bundle = try ModelBundle(path: path)
            versions = bundle.versions
            current = bundle.currentVersion
            chosen = version ?? current
            model = try bundle.load(version: version)
        } catch {
            errors.append(error)
        }
        return .object(
            JSONObject([
                ("inspectVersion", JSONValue(Int64(1))),
                ("kind", .string("model")),
                ("path", .string(path)),
                ("versions", .array(versions.map(JSONValue.string))),
                ("currentVersion", current.map(JSONValue.string) ?? .null),
                ("version", (model == nil ? nil : chosen).map(JSONValue.string) ?? .null),
                ("modelHash", model.map { .string($0.modelHash) } ?? .null),
                ("model", model?.descriptionDocument ?? .null),
                (
                    "errors",
                    .array(
                        errors.map { error in
                            .object(
                                JSONObject([
                                    ("file", error.location.file.map(JSONValue.string) ?? .null),
                                    ("code", .string(error.code.rawValue)),
                                    ("line", error.location.line.map { JSONValue(Int64($0)) } ?? .null),
                                    ("column", error.location.column.map { JSONValue(Int64($0)) } ?? .null),
                                    ("message", .string(error.message)),
                                ]))
                        })
                ),
            ]))
    }
}
