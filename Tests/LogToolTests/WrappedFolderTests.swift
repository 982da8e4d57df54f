import Foundation
import Testing
import JSONDocument

/// Folders wrapped by the independent script `scripts/make-wrapped-fixtures.py` (Spec/wrappers.md 9)
/// read by the built `logtool` exactly as their plain originals: the same state, the same
/// verify findings, the same inspect report but for the layers; the wrong password (exit 2), no
/// password and files of other kinds (exit 1) each give their own code.
@Suite("Wrapped folders end to end")
struct WrappedFolderTests {
    static let folders = Run.packageRoot.appendingPathComponent("Fixtures/wrappers/folders")
    static let passwordFile = "Fixtures/wrappers/folders/password.txt"

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var source: String
        var testDescription: String { name }
    }

    static let cases: [Case] = {
        guard let data = try? Data(contentsOf: folders.appendingPathComponent("cases.json")),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let cases = object["cases"] as? [[String: Any]]
        else { return [] }
        return cases.map { Case(name: $0["name"] as? String ?? "", source: $0["source"] as? String ?? "") }
    }()

    /// Runs `logtool` with standard input from /dev/null (so it never prompts) and `environment`
    /// added to a copy of this process's environment without LOGTOOL_PASSWORD. Its output goes to
    /// files rather than pipes, so that a tool that prints a line per file (the fault the
    /// wrong-password tests look for) cannot fill a pipe and hang while the other is read.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let process = Process()
        process.executableURL = Run.binary
        process.arguments = arguments
        process.currentDirectoryURL = Run.packageRoot
        var merged = ProcessInfo.processInfo.environment
        merged["LOGTOOL_PASSWORD"] = nil
        process.environment = merged.merging(environment) { $1 }
        let outputs = FileManager.default.temporaryDirectory.appendingPathComponent("logtool-output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: outputs) }
        let outURL = outputs.appendingPathComponent("stdout"), errURL = outputs.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return Run(
            status: process.terminationStatus, stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    @Test("seven wrapped folders are there")
    func present() {
        #expect(Self.cases.count == 7)
    }

    @Test("each wrapped folder merges to the state of its plain original", arguments: cases)
    func merge(testCase: Case) throws {
        let plain = try Self.run(["merge", "\(testCase.source)/cloud"])
        let wrapped = try Self.run(["merge", "--password-file", Self.passwordFile, "Fixtures/wrappers/folders/\(testCase.name)/cloud"])
        #expect(plain.status == 0)
        #expect(wrapped.status == 0, "\(wrapped.stderr)")
        #expect(wrapped.stdout == plain.stdout)
        #expect(!plain.stdout.isEmpty)
    }

    /// A verify document's diagnostics without their informative texts.
    static func diagnostics(_ output: String) throws -> [JSONValue] {
        let document = try JSONParser.parse(Array(output.utf8))
        let ensembles = document[JSONPointer(["ensembles"])]?.arrayValue ?? []
        return ensembles.flatMap { $0[JSONPointer(["diagnostics"])]?.arrayValue ?? [] }.map { diagnostic in
            guard case .object(let object) = diagnostic else { return diagnostic }
            return .object(JSONObject(object.filter { $0.key != "reason" && $0.key != "consequence" }.map { ($0.key, $0.value) }))
        }
    }

    @Test("each wrapped folder verifies with the findings of its plain original; the mixed one adds verify.mixed-wrapping", arguments: cases)
    func verify(testCase: Case) throws {
        let plain = try Self.run(["verify", "--json", "\(testCase.source)/cloud"])
        let wrapped = try Self.run(["verify", "--json", "--password-file", Self.passwordFile, "Fixtures/wrappers/folders/\(testCase.name)/cloud"])
        #expect(wrapped.status == plain.status, "\(wrapped.stdout)")
        var expected = try Self.diagnostics(plain.stdout)
        let found = try Self.diagnostics(wrapped.stdout)
        if testCase.name == "healthy-mixed" {
            let mixed = found.filter { $0[JSONPointer(["code"])] == .string("verify.mixed-wrapping") }
            #expect(mixed.count == 1)
            #expect(
                mixed.first?[JSONPointer(["details", "layers"])] == .object(JSONObject([("encrypted", JSONValue(Int64(3))), ("plain", JSONValue(Int64(4)))])))
            expected += mixed
        }
        #expect(Set(found.map { JSONWriter().string($0) }) == Set(expected.map { JSONWriter().string($0) }))
    }

    @Test("inspect --json of a wrapped folder is its original's report with each file's layers", arguments: cases)
    func inspect(testCase: Case) throws {
        let plain = try Self.run(["inspect", "--json", "\(testCase.source)/cloud"])
        let wrapped = try Self.run(["inspect", "--json", "--password-file", Self.passwordFile, "Fixtures/wrappers/folders/\(testCase.name)/cloud"])
        #expect(wrapped.status == 0, "\(wrapped.stdout)")
        func events(_ output: String) throws -> [[String: String]] {
            let document = try JSONParser.parse(Array(output.utf8))
            return (document[JSONPointer(["ensembles"])]?.arrayValue ?? []).flatMap { $0[JSONPointer(["events"])]?.arrayValue ?? [] }.map { event in
                var fields: [String: String] = [:]
                for key in ["globalCount", "store", "revision", "type", "objectChanges", "parts", "layers"] {
                    fields[key] = event[JSONPointer([key])].map { JSONWriter().string($0) }
                }
                return fields
            }
        }
        let plainEvents = try events(plain.stdout)
        let wrappedEvents = try events(wrapped.stdout)
        #expect(plainEvents.count == wrappedEvents.count)
        #expect(plainEvents.allSatisfy { $0["layers"] == nil })
        for (plainEvent, wrappedEvent) in zip(plainEvents, wrappedEvents) {
            var withoutLayers = wrappedEvent
            withoutLayers["layers"] = nil
            #expect(withoutLayers == plainEvent)
        }
        if testCase.name.hasSuffix("zipped-encrypted") {
            #expect(wrappedEvents.allSatisfy { $0["layers"] == #"["encrypted","zip"]"# })
        }
    }

    @Test("the wrong password: wrap.bad-password and exit 2 (Spec/wrappers.md 5.5); no password: wrap.password-required and exit 1")
    func passwords() throws {
        let folder = "Fixtures/wrappers/folders/healthy-encrypted/cloud"
        let wrong = try Self.run(["merge", folder], environment: ["LOGTOOL_PASSWORD": "not the password"])
        #expect(wrong.status == 2)
        #expect(wrong.stdout.isEmpty)
        #expect(wrong.stderr.contains("wrap.bad-password"))
        let right = try Self.run(["merge", folder], environment: ["LOGTOOL_PASSWORD": "correct horse battery staple"])
        #expect(right.status == 0, "\(right.stderr)")
        let none = try Self.run(["verify", "--json", folder])
        #expect(none.status == 1)
        #expect(try Self.diagnostics(none.stdout).contains { $0[JSONPointer(["details", "cause"])] == .string("wrap.password-required") })
        let missingFile = try Self.run(["merge", "--password-file", "/nonexistent/password", folder])
        #expect(missingFile.status == 2)
    }

    @Test("a zip archive, a binary property list, an SQLite file and random bytes placed as events each get their own code, not a JSON error")
    func kindsPlacedAsEvents() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("wrapped-kinds-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/verify/healthy/cloud"), to: scratch)
        let damaged = Run.packageRoot.appendingPathComponent("Fixtures/wrappers/damaged")
        let placed = [
            ("zip-two-entries.cdeevent", "9_ALPHA-STORE_3.cdeevent", "wrap.zip-entry-count"),
            ("binary-plist.cdeevent", "10_ALPHA-STORE_4.cdeevent", "file.kind-binary-plist"),
            ("sqlite.cdeevent", "11_ALPHA-STORE_5.cdeevent", "file.kind-sqlite"),
            ("random.cdeevent", "12_ALPHA-STORE_6.cdeevent", "file.kind-unknown"),
            ("zipped-sqlite.cdeevent", "13_ALPHA-STORE_7.cdeevent", "file.kind-sqlite"),
        ]
        for (source, name, _) in placed {
            try FileManager.default.copyItem(at: damaged.appendingPathComponent(source), to: scratch.appendingPathComponent("E/events/\(name)"))
        }
        let verify = try Self.run(["verify", "--json", scratch.path])
        #expect(verify.status == 1)
        let unreadable = try Self.diagnostics(verify.stdout).filter { $0[JSONPointer(["code"])] == .string("verify.unreadable-file") }
        for (_, name, code) in placed {
            let found = unreadable.filter { $0[JSONPointer(["files", "0"])] == .string("events/\(name)") }
            #expect(found.count == 1, "\(name)")
            #expect(found.first?[JSONPointer(["details", "cause"])] == .string(code), "\(name)")
        }
        #expect(!verify.stdout.contains("json.syntax"))
        let inspect = try Self.run(["inspect", scratch.appendingPathComponent("E/events/11_ALPHA-STORE_5.cdeevent").path])
        #expect(inspect.status == 1)
        #expect(inspect.stdout.contains("SQLite database") && inspect.stdout.contains("first bytes 53 51 4C 69"), "\(inspect.stdout)")
    }
}

extension Run {
    init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}
