import Foundation
import JSONDocument
import SchemaValidation
import Testing

/// `logtool inspect` and `verify` on a TICoreDataSync folder of Fixtures/ticds (Spec/ticds.md 7, 8):
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
}
