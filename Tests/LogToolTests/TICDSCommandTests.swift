import Foundation
import JSONDocument
import SQLiteConnection
import SchemaValidation
import Testing

/// `logtool inspect`, `verify` and `merge` on a TICoreDataSync folder of Fixtures/ticds (Spec/ticds.md 7, 8, 10):
/// detected without an option, the JSON documents valid against their schemas, exit statuses.
@Suite("logtool on a TICoreDataSync folder")
struct TICDSCommandTests {
    /// A copy of the case's folder (git keeps neither the empty folders nor the dates; neither
    /// matters to what is checked here).
    static func app(_ name: String) throws -> (copy: URL, app: URL) {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("ticds-cli-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/ticds/\(name)/folder"), to: copy)
        return (copy, copy.appendingPathComponent("com.example.TICDSNotebook"))
    }

    @Test("inspect --json of an application folder is a ticds document valid against inspect.schema.json")
    func inspect() throws {
        let (copy, app) = try Self.app("healthy")
        defer { try? FileManager.default.removeItem(at: copy) }
        let run = try Run(["inspect", "--json", app.path])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try JSONParser.parse(run.stdout)
        #expect(report[JSONPointer(["kind"])] == .string("ticds"))
        #expect(try BundledSchema.inspect.validator().validate(report).isEmpty)
    }

    @Test("verify --json of a damaged folder puts its findings in `ticds`, valid against verify.schema.json, exit 1")
    func verify() throws {
        let (copy, app) = try Self.app("binary-store-set")
        defer { try? FileManager.default.removeItem(at: copy) }
        let passing = try Run(["verify", "--json", app.path])
        #expect(passing.status == 0, "\(passing.stderr)")
        let report = try JSONParser.parse(passing.stdout)
        #expect(try BundledSchema.verify.validator().validate(report).isEmpty)
        let codes = (report[JSONPointer(["ticds", "diagnostics"])]?.arrayValue ?? []).compactMap { $0[JSONPointer(["code"])]?.stringValue }
        #expect(codes.contains("file.kind-binary-store"))
        #expect(try Run(["verify", "--strict", app.path]).status == 1)
        let (tamperedCopy, tampered) = try Self.app("tampered-hmac")
        defer { try? FileManager.default.removeItem(at: tamperedCopy) }
        let password = tamperedCopy.appendingPathComponent("password")
        try Data("correct horse battery staple".utf8).write(to: password)
        let failing = try Run(["verify", "--json", "--password-file", password.path, tampered.path])
        #expect(failing.status == 1, "\(failing.stderr)")
        #expect(try BundledSchema.verify.validator().validate(try JSONParser.parse(failing.stdout)).isEmpty)
    }

    @Test("inspect --as-client keeps that client's view; a client of no document is a usage error")
    func asClient() throws {
        let (copy, app) = try Self.app("healthy")
        defer { try? FileManager.default.removeItem(at: copy) }
        let client = "5913491A-6188-41DE-97A1-FBC01CE2308E-44748-0005D414E784DA9A"
        let run = try Run(["inspect", "--json", "--as-client", client, app.path])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try JSONParser.parse(run.stdout)
        #expect(try BundledSchema.inspect.validator().validate(report).isEmpty)
        for document in report[JSONPointer(["documents"])]?.arrayValue ?? [] {
            #expect(document[JSONPointer(["clientViews"])]?.objectValue?.members.map(\.key) == [client])
        }
        let text = try Run(["inspect", "--as-client", client, app.path])
        #expect(text.stdout.contains("Client \(client) applies next"))
        let unknown = try Run(["inspect", "--as-client", "nobody", app.path])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("ticds.no-such-client"))
    }

    /// A copy with the modification times of the case's `fileDates` (the framework's order rests on them).
    static func datedApp(_ name: String) throws -> (copy: URL, app: URL, facts: JSONValue) {
        let (copy, app) = try Self.app(name)
        let facts = try JSONParser.parse(Array(try Data(contentsOf: Run.packageRoot.appendingPathComponent("Fixtures/ticds/\(name)/facts.json"))))
        for (path, date) in facts[JSONPointer(["fileDates"])]?.objectValue?.members ?? [] {
            guard let seconds = date.numberValue?.doubleValue else { continue }
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: seconds)], ofItemAtPath: copy.appendingPathComponent(path).path)
        }
        return (copy, app, facts)
    }

    static let model = Run.packageRoot.appendingPathComponent("Fixtures/ticds/Notebook.xcdatamodel").path

    @Test("merge of a document: the state document and --sqlite, warnings on standard error; stops exit 1; usage errors exit 2")
    func merge() throws {
        let (copy, app, facts) = try Self.datedApp("replay-edges")
        defer { try? FileManager.default.removeItem(at: copy) }
        let document = app.appendingPathComponent("Documents/\(facts[JSONPointer(["documents", "0", "id"])]?.stringValue ?? "")")
        let database = copy.appendingPathComponent("state.sqlite")
        let (client, replay) = try #require(facts[JSONPointer(["documents", "0", "replays"])]?.objectValue?.members.first)
        let run = try Run(["merge", "--model", Self.model, "--as-client", client, "--sqlite", database.path, document.path])
        #expect(run.status == 0, "\(run.stderr)")
        let state = try JSONParser.parse(run.stdout)
        #expect(try BundledSchema.state.validator().validate(state).isEmpty)
        // replay-edges: four changes the framework skips, each a warning line.
        let warnings = ["[ticds.object-not-found]", "[ticds.related-object-not-found]"].map { run.stderr.components(separatedBy: $0).count - 1 }
        #expect(warnings == [3, 1], "\(run.stderr)")
        let connection = try Connection(readOnly: database.path)
        defer { connection.close() }
        for entity in ["Note", "Tag"] {
            let expected = replay[JSONPointer(["state", entity])]?.objectValue?.members.count ?? -1
            let count = try connection.prepare("SELECT count(*) FROM \"\(entity)\"")
            #expect(try count.step())
            #expect(Int(count.int64(0)) == expected, "\(entity)")
            #expect(state[JSONPointer(["entities", entity])]?.objectValue?.members.count ?? 0 == expected, "\(entity)")
        }
        let joined = try connection.prepare("SELECT count(*) FROM \"Note_tags\"")
        #expect(try joined.step())
        let tags = (replay[JSONPointer(["state", "Note"])]?.objectValue?.members ?? []).reduce(0) {
            $0 + ($1.value[JSONPointer(["relationships", "tags"])]?.arrayValue?.count ?? 0)
        }
        #expect(Int(joined.int64(0)) == tags)

        let (conflictCopy, conflictApp, conflictFacts) = try Self.datedApp("conflict")
        defer { try? FileManager.default.removeItem(at: conflictCopy) }
        let conflicted = conflictApp.appendingPathComponent("Documents/\(conflictFacts[JSONPointer(["documents", "0", "id"])]?.stringValue ?? "")")
        let stopped = try Run(["merge", "--json", "--model", Self.model, conflicted.path])
        #expect(stopped.status == 1)
        let errors = try JSONParser.parse(stopped.stdout)
        #expect(errors[JSONPointer(["errors", "0", "code"])] == .string("ticds.conflict"))
        let resolved = try Run(["merge", "--conflicts", "remote", "--model", Self.model, conflicted.path])
        #expect(resolved.status == 0, "\(resolved.stderr)")
        #expect(resolved.stdout.contains("Plan (Ben)") && !resolved.stdout.contains("Plan (Ann)"))

        let (healthyCopy, healthy) = try Self.app("healthy")
        defer { try? FileManager.default.removeItem(at: healthyCopy) }
        let several = try Run(["merge", "--model", Self.model, healthy.path])
        #expect(several.status == 2 && several.stderr.contains("ticds.several-documents"), "\(several.stderr)")
        let noModel = try Run(["merge", document.path])
        #expect(noModel.status == 2 && noModel.stderr.contains("ticds.model-required"), "\(noModel.stderr)")
        // A device view of an Ensembles folder and a TICoreDataSync replay do not mix.
        let mixed = try Run(["merge", "--as-store", "S", "--as-client", "C", "--model", Self.model, document.path])
        #expect(mixed.status == 2 && mixed.stderr.contains("give one or the other") && !mixed.stderr.contains("ticds."), "\(mixed.stderr)")
    }
}
