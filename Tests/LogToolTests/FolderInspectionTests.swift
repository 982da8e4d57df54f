import Foundation
import Testing
import JSONDocument
import SchemaValidation
import TestSupport
import EnsemblesToolkit

/// `Ensemble.inspectFolder()`, the typed folder report: `JSONEncoder` gives the document
/// `inspect --json` prints (Spec/inspect.md 3.1), `JSONDecoder` reads that document back, and
/// both agree with the schema, on every cloud folder of the fixtures that inspect reads.
@Suite("Typed folder report")
struct FolderInspectionTests {
    /// The folder fixtures, the verify cases (debris, unknown keys, unreadable files, multipart
    /// sets, gaps), the repair cases (duplicate folders) and the wrapped folders (layers).
    static let folders: [(path: String, password: String?)] = {
        let root = Run.packageRoot
        let manager = FileManager.default
        var found: [(String, String?)] = []
        for group in ["Fixtures/folders", "Fixtures/verify", "Fixtures/repair", "Fixtures/repair-cure", "Fixtures/wrappers/folders"] {
            let names = (try? manager.contentsOfDirectory(atPath: root.appendingPathComponent(group).path)) ?? []
            for name in names.sorted() where manager.fileExists(atPath: root.appendingPathComponent("\(group)/\(name)/cloud").path) {
                found.append(("\(group)/\(name)/cloud", group.hasPrefix("Fixtures/wrappers") ? "correct horse battery staple" : nil))
            }
        }
        return found
    }()

    static func ensemble(_ folder: (path: String, password: String?)) -> Ensemble {
        var options = Ensemble.Options()
        options.password = folder.password.map { PasswordSource(password: $0) }
        return Ensemble(at: Run.packageRoot.appendingPathComponent(folder.path), options: options)
    }

    static func encoded(_ report: FolderInspection) throws -> JSONValue {
        try JSONParser.parse(Array(try JSONEncoder().encode(report)))
    }

    /// Each folder read once both ways: the typed report and the document `inspect --json`
    /// prints (`inspect()`, the command's call).
    static let reports: [(path: String, report: FolderInspection, document: JSONValue)] = {
        folders.compactMap { folder in
            let ensemble = ensemble(folder)
            guard let report = try? ensemble.inspectFolder(), let document = try? ensemble.inspect() else { return nil }
            return (folder.path, report, document)
        }
    }()

    @Test("the fixtures cover what the report holds")
    func coverage() throws {
        #expect(Self.reports.count == Self.folders.count, "a folder could not be read")
        #expect(Self.reports.count >= 40, "\(Self.reports.count) folders")
        let ensembles = Self.reports.flatMap(\.report.ensembles)
        #expect(ensembles.contains { !$0.debris.isEmpty })
        #expect(ensembles.contains { !$0.duplicateFolders.isEmpty })
        #expect(ensembles.contains { !$0.unreadable.isEmpty })
        #expect(ensembles.contains { !$0.unknownKeys.isEmpty })
        #expect(ensembles.contains { !$0.dataFiles.isEmpty })
        #expect(ensembles.contains { $0.stores.contains { !$0.gaps.isEmpty } })
        #expect(ensembles.contains { $0.stores.contains { $0.leechDate != nil } })
        #expect(ensembles.contains { $0.events.contains { $0.parts?.complete == false } })
        #expect(ensembles.contains { $0.events.contains { !$0.layers.isEmpty } })
        #expect(ensembles.contains { $0.baselines.contains { $0.revisionSet != nil } })
        #expect(ensembles.contains { $0.baselines.contains(where: \.legacyName) })
    }

    @Test("JSONEncoder gives the inspect --json document, and it is valid against the schema")
    func encodes() throws {
        for (path, report, document) in Self.reports {
            let encoded = try Self.encoded(report)
            let same = encoded == document
            #expect(same, "\(path): JSONEncoder's document differs from inspect()'s")
            #expect(try BundledSchema.inspect.validate(encoded) == [], "\(path)")
        }
    }

    @Test("the folder fixtures' expected documents, written by hand, are what JSONEncoder gives")
    func expectedDocuments() throws {
        for folder in Self.folders where folder.path.hasPrefix("Fixtures/folders/") {
            let expectedFile = Run.packageRoot.appendingPathComponent(folder.path).deletingLastPathComponent().appendingPathComponent("expected/inspect.json")
            let expected = try JSONParser.parse(Array(try Data(contentsOf: expectedFile)))
            let report = try #require(Self.reports.first { $0.path == folder.path }).report
            let same = withoutProse(try Self.encoded(report)) == withoutProse(expected)
            #expect(same, "\(folder.path): differs from expected/inspect.json")
        }
    }

    @Test("JSONDecoder reads every inspect --json document back into the same report")
    func decodes() throws {
        for (path, report, document) in Self.reports {
            let decoded = try JSONDecoder().decode(FolderInspection.self, from: Data(JSONWriter().bytes(document)))
            let same = decoded == report, roundTrip = try Self.encoded(decoded) == document
            #expect(same, "\(path): decoded report differs")
            #expect(roundTrip, "\(path): re-encoded document differs")
        }
    }

    @Test("a document whose summary or members do not match is refused")
    func refuses() throws {
        let bytes = JSONWriter().bytes(try Self.ensemble(("Fixtures/folders/example/cloud", nil)).inspect())
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(FolderInspection.self, from: Data(text.replacingOccurrences(of: #""ensembles":1"#, with: #""ensembles":2"#).utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(FolderInspection.self, from: Data(text.replacingOccurrences(of: #""globalCount""#, with: #""globalcount""#).utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(FolderInspection.self, from: Data(text.replacingOccurrences(of: #""kind":"folder""#, with: #""kind":"event""#).utf8))
        }
    }

    @Test("inspectFolder refuses what is not a cloud folder, as a usage error")
    func notAFolder() throws {
        for path in ["Fixtures/v2-json/valid/01-attribute-kinds.json", "Fixtures/no such folder"] {
            #expect(throws: EnsembleError.self) { try Ensemble(at: Run.packageRoot.appendingPathComponent(path)).inspectFolder() }
            do {
                _ = try Ensemble(at: Run.packageRoot.appendingPathComponent(path)).inspectFolder()
            } catch {
                #expect(error.kind == .usage)
            }
        }
    }
}
