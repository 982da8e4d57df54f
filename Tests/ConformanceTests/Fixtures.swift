import Foundation
import JSONDocument

/// Locates `Fixtures/` in the package and reads its manifests.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: url(path))) }

    static func json(_ path: String) throws -> JSONValue { try JSONParser.parse(try bytes(path)) }

    /// File names in a fixture folder, sorted, hidden files excluded.
    static func files(in folder: String, suffix: String = "") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url(folder).path)) ?? [])
            .filter { !$0.hasPrefix(".") && $0.hasSuffix(suffix) }
            .sorted()
    }

    /// The `cases` array of a manifest.
    static func cases(_ path: String) -> [JSONValue] {
        (try? json(path))?[JSONPointer(["cases"])]?.arrayValue ?? []
    }
}

extension JSONValue {
    subscript(key: String) -> JSONValue? { self[JSONPointer([key])] }
}
