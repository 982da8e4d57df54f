import Foundation
import Testing

/// Only what a library user calls is public: every public type declared under Sources/ is in
/// this list, so that a type made public by accident fails here and is either made package or
/// added on purpose (at most 56).
@Suite("Public surface")
struct PublicSurfaceTests {
    static let expected: Set<String> = [
        "CloudFolder.RepairUndoResult", "DataModel.DataModel", "DataModel.ModelBundle", "EnsembleModel.AttributeValue", "EnsembleModel.ChangeType",
        "EnsembleModel.Event", "EnsembleModel.EventType", "EnsembleModel.ObjectChange", "EnsembleModel.PropertyChange", "EnsembleModel.Value",
        "EnsemblesToolkit.Action", "EnsemblesToolkit.ConversionReport", "EnsemblesToolkit.DeviceView", "EnsemblesToolkit.Diagnostic",
        "EnsemblesToolkit.Ensemble", "EnsemblesToolkit.EnsembleError", "EnsemblesToolkit.EnsembleVerification", "EnsemblesToolkit.Finding",
        "EnsemblesToolkit.Format", "EnsemblesToolkit.Kind", "EnsemblesToolkit.Lane", "EnsemblesToolkit.Mark", "EnsemblesToolkit.Options",
        "EnsemblesToolkit.RebaseSummary", "EnsemblesToolkit.RepairPlan", "EnsemblesToolkit.RepairResult", "EnsemblesToolkit.Severity",
        "EnsemblesToolkit.TimelineReport", "EventCodecs.DataBlob", "EventCodecs.V2BinaryDecoder", "EventCodecs.V2BinaryEncoder", "EventCodecs.V2JSONDecoder",
        "EventCodecs.V2JSONEncoder", "EventCodecs.V2JSONFastDecoder", "FileWrappers.ContentKind", "FileWrappers.Credentials", "FileWrappers.PasswordSource",
        "FileWrappers.RNCryptor", "FileWrappers.Unwrapper", "FileWrappers.Wrapping", "FileWrappers.ZipArchive", "JSONDocument.Code", "JSONDocument.ExactString",
        "JSONDocument.FormatError", "JSONDocument.JSONNumber", "JSONDocument.JSONObject", "JSONDocument.JSONParser", "JSONDocument.JSONPointer",
        "JSONDocument.JSONReadingOptions", "JSONDocument.JSONValue", "JSONDocument.JSONWriter", "JSONDocument.Location", "MergeEngine.IntegrityProblem",
        "MergeEngine.StoreState", "SchemaValidation.BundledSchema", "SchemaValidation.V2EventFastCheck",
    ]

    /// MODULE.TYPE of every `public` struct, enum, class, protocol, actor or typealias in Sources/.
    static func declared() throws -> [String] {
        var found: [String] = []
        let sources = SpecCompletenessTests.packageRoot.appendingPathComponent("Sources")
        let regex = try Regex(#"^\s*public (?:final )?(?:struct|enum|class|protocol|actor|typealias) ([A-Za-z0-9_]+)"#)
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let module = url.pathComponents[sources.pathComponents.count + 1]
            for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
                if let match = line.firstMatch(of: regex), let name = match.output[1].substring { found.append("\(module).\(name)") }
            }
        }
        return found
    }

    @Test("every public type is meant as API, and there are at most 56")
    func publicTypes() throws {
        let declared = try Self.declared()
        #expect(declared.count <= 56, "\(declared.count) public types")
        #expect(Set(declared).subtracting(Self.expected).sorted() == [], "public by accident?")
        #expect(Self.expected.subtracting(declared).sorted() == [], "no longer public: remove from the list")
    }
}
