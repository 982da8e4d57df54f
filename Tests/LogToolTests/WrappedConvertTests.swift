import Foundation
import Testing
import JSONDocument

/// `convert --zip` and `--encrypt` (Spec/wrappers.md 8, Spec/convert.md): a plain fixture folder
/// written wrapped merges, verifies and inspects like its original; Python's `cryptography` and
/// `zipfile` (scripts/unwrap-folder.py) open every written file; encryption is salted at random;
/// and a wrapped folder converted or rebased without the options comes out plain throughout.
@Suite("convert --zip and --encrypt")
struct WrappedConvertTests {
    static let source = "Fixtures/merge/data-file-and-multipart/cloud"
    static let expectedState = "Fixtures/merge/data-file-and-multipart/expected/state.json"
    static let passwordFile = "Fixtures/wrappers/folders/password.txt"

    struct Variant: Sendable, CustomTestStringConvertible {
        var options: [String]
        /// Outermost first, as inspect shows them.
        var layers: [String]
        var testDescription: String { options.joined(separator: " ") }
    }

    static let variants = [
        Variant(options: ["--zip"], layers: ["zip"]),
        Variant(options: ["--encrypt"], layers: ["encrypted"]),
        Variant(options: ["--zip", "--encrypt"], layers: ["encrypted", "zip"]),
    ]

    /// A new empty folder for one test's outputs.
    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("wrapped-convert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Every regular file below `root`, by relative path.
    static func tree(_ root: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            files[String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))] = try? Data(contentsOf: url)
        }
        return files
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        try WrappedFolderTests.run(arguments, environment: environment)
    }

    /// The outer layer the first bytes show (Spec/wrappers.md 2), or "plain".
    static func outerLayer(_ data: Data) -> String {
        let bytes = [UInt8](data.prefix(4))
        if bytes == [0x50, 0x4B, 0x03, 0x04] { return "zip" }
        if data.count >= 82 && bytes.starts(with: [0x03, 0x01]) { return "encrypted" }
        return "plain"
    }

    /// Runs scripts/unwrap-folder.py: each file's layers as Python found them.
    static func unwrapWithPython(_ folder: URL, into destination: URL) throws -> (status: Int32, layers: [String: [String]]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "scripts/unwrap-folder.py", "--password-file", passwordFile, folder.path, destination.path]
        process.currentDirectoryURL = Run.packageRoot
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let layers = (try? JSONSerialization.jsonObject(with: data)) as? [String: [String]] ?? [:]
        return (process.terminationStatus, layers)
    }

    @Test(
        "a plain folder written wrapped: every file wrapped, names unchanged, the same state, no new verify finding, layers in inspect, readable by Python",
        arguments: variants)
    func roundTrip(variant: Variant) throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let wrapped = scratch.appendingPathComponent("wrapped"), plain = scratch.appendingPathComponent("plain")
        let convert = try Self.run(["convert"] + variant.options + ["--password-file", Self.passwordFile, Self.source, wrapped.path])
        #expect(convert.status == 0, "\(convert.stderr)")
        #expect(try Self.run(["convert", Self.source, plain.path]).status == 0)

        let wrappedFiles = Self.tree(wrapped), plainFiles = Self.tree(plain)
        #expect(Set(wrappedFiles.keys) == Set(plainFiles.keys))
        #expect(wrappedFiles.keys.contains("E/data/PHOTO-1") && wrappedFiles.keys.contains("E/stores/A"))
        for (path, data) in wrappedFiles { #expect(Self.outerLayer(data) == variant.layers[0], "\(path)") }

        let merged = try Self.run(["merge", "--password-file", Self.passwordFile, wrapped.path])
        #expect(merged.status == 0, "\(merged.stderr)")
        let expected = try JSONParser.parse(Array(try Data(contentsOf: Run.packageRoot.appendingPathComponent(Self.expectedState))))
        #expect(try JSONParser.parse(Array(merged.stdout.utf8)) == expected)

        let verifyPlain = try Self.run(["verify", "--json", Self.source])
        let verifyWrapped = try Self.run(["verify", "--json", "--password-file", Self.passwordFile, wrapped.path])
        #expect(verifyWrapped.status == verifyPlain.status, "\(verifyWrapped.stdout)")
        let found = try WrappedFolderTests.diagnostics(verifyWrapped.stdout).map { JSONWriter().string($0) }
        #expect(Set(found) == Set(try WrappedFolderTests.diagnostics(verifyPlain.stdout).map { JSONWriter().string($0) }))

        let inspect = try Self.run(["inspect", "--json", "--password-file", Self.passwordFile, wrapped.path])
        #expect(inspect.status == 0)
        let document = try JSONParser.parse(Array(inspect.stdout.utf8))
        let events = (document[JSONPointer(["ensembles"])]?.arrayValue ?? []).flatMap { $0[JSONPointer(["events"])]?.arrayValue ?? [] }
        #expect(events.count == 2)
        for event in events { #expect(event[JSONPointer(["layers"])] == .array(variant.layers.map(JSONValue.string))) }

        // An independent implementation opens every file and finds the plain conversion inside.
        let python = try Self.unwrapWithPython(wrapped, into: scratch.appendingPathComponent("python"))
        #expect(python.status == 0)
        #expect(python.layers.count == wrappedFiles.count)
        for (path, layers) in python.layers { #expect(layers == variant.layers, "\(path)") }
        #expect(Self.tree(scratch.appendingPathComponent("python")) == plainFiles)
    }

    @Test("two encrypted conversions differ in every byte that is random but merge to the same state")
    func randomSalts() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let first = scratch.appendingPathComponent("first"), second = scratch.appendingPathComponent("second")
        for out in [first, second] {
            #expect(try Self.run(["convert", "--zip", "--encrypt", "--password-file", Self.passwordFile, Self.source, out.path]).status == 0)
        }
        let a = Self.tree(first), b = Self.tree(second)
        #expect(a.count == 5 && Set(a.keys) == Set(b.keys))
        for (path, data) in a {
            // Salts (2-17) and IV (18-33) differ, and with them everything after the header.
            #expect(data.subdata(in: 2..<34) != b[path]?.subdata(in: 2..<34), "\(path)")
            #expect(data != b[path], "\(path)")
        }
        let mergeA = try Self.run(["merge", "--password-file", Self.passwordFile, first.path])
        let mergeB = try Self.run(["merge", "--password-file", Self.passwordFile, second.path])
        #expect(mergeA.status == 0 && !mergeA.stdout.isEmpty)
        #expect(mergeA.stdout == mergeB.stdout)
    }

    @Test("reading an encrypted conversion with another password: wrap.bad-password and exit 2 (Spec/wrappers.md 5.5)")
    func wrongPassword() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("out")
        #expect(try Self.run(["convert", "--encrypt", "--password-file", Self.passwordFile, Self.source, out.path]).status == 0)
        let wrong = try Self.run(["merge", out.path], environment: ["LOGTOOL_PASSWORD": "not the password"])
        #expect(wrong.status == 2)
        #expect(wrong.stdout.isEmpty)
        #expect(wrong.stderr.contains("wrap.bad-password"), "\(wrong.stderr)")
        let python = try Self.unwrapWithPython(out, into: scratch.appendingPathComponent("python"))
        #expect(python.status == 0)
    }

    @Test("--encrypt without a password, or with an empty one, is a usage error and creates nothing")
    func noPassword() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("out")
        let none = try Self.run(["convert", "--encrypt", Self.source, out.path])
        #expect(none.status == 2)
        #expect(none.stderr.contains("password"), "\(none.stderr)")
        let empty = scratch.appendingPathComponent("empty")
        _ = FileManager.default.createFile(atPath: empty.path, contents: Data("\n".utf8))
        #expect(try Self.run(["convert", "--encrypt", "--password-file", empty.path, Self.source, out.path]).status == 2)
        #expect(try Self.run(["convert", "--encrypt", Self.source, out.path], environment: ["LOGTOOL_PASSWORD": ""]).status == 2)
        #expect(!FileManager.default.fileExists(atPath: out.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == ["empty"])
    }

    @Test("a single event file is written wrapped too and reads back")
    func singleFile() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let out = scratch.appendingPathComponent("0_A_0.cdeevent")
        let event = "\(Self.source)/E/events/0_A_0.cdeevent"
        #expect(try Self.run(["convert", "--zip", "--encrypt", "--password-file", Self.passwordFile, event, out.path]).status == 0)
        #expect(Self.outerLayer(try Data(contentsOf: out)) == "encrypted")
        let inspect = try Self.run(["inspect", "--json", "--password-file", Self.passwordFile, out.path])
        #expect(inspect.status == 0)
        #expect(try JSONParser.parse(Array(inspect.stdout.utf8))[JSONPointer(["layers"])] == .array([.string("encrypted"), .string("zip")]))
    }

    @Test("a wrapped folder converted without --zip/--encrypt is plain throughout: events, registrations and data files, names without suffixes")
    func convertWrappedToPlain() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let reference = scratch.appendingPathComponent("reference")
        #expect(try Self.run(["convert", Self.source, reference.path]).status == 0)
        for name in ["multipart-encrypted", "multipart-zipped", "multipart-zipped-encrypted"] {
            let out = scratch.appendingPathComponent(name)
            let run = try Self.run(["convert", "--password-file", Self.passwordFile, "Fixtures/wrappers/folders/\(name)/cloud", out.path])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(Self.tree(out) == Self.tree(reference), "\(name)")
        }
    }

    @Test("a wrapped folder rebased is plain throughout and equals the rebase of its plain original")
    func rebaseWrappedToPlain() throws {
        let scratch = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let fixture = Run.packageRoot.appendingPathComponent("Fixtures/rebase/data-files")
        let wrapped = scratch.appendingPathComponent("wrapped"), out = scratch.appendingPathComponent("out")
        let convert = try Self.run([
            "convert", "--zip", "--encrypt", "--password-file", Self.passwordFile, fixture.appendingPathComponent("cloud").path, wrapped.path,
        ])
        #expect(convert.status == 0)
        #expect(Self.tree(wrapped).values.allSatisfy { Self.outerLayer($0) == "encrypted" })
        let rebase = try Self.run(["rebase", "--password-file", Self.passwordFile, wrapped.path, "--out", out.path])
        #expect(rebase.status == 0, "\(rebase.stderr)")
        let written = Self.tree(out)
        #expect(!written.isEmpty)
        #expect(written == Self.tree(fixture.appendingPathComponent("expected/out")))
    }

    @Test("part files given directly with wrapper suffixes are grouped as their plain names are")
    func looseWrappedParts() throws {
        let wrapped = "Fixtures/wrappers/folders/multipart-zipped-encrypted/cloud/E/events"
        let plain = "\(Self.source)/E/events"
        let fromWrapped = try Self.run(
            ["merge", "--password-file", Self.passwordFile]
                + ["0_A_0.cdeevent.zip.enc", "1_B_0_2of2.cdeevent.zip.enc", "1_B_0_1of2.cdeevent.zip.enc"].map { "\(wrapped)/\($0)" })
        let fromPlain = try Self.run(["merge"] + ["0_A_0.cdeevent", "1_B_0_2of2.cdeevent", "1_B_0_1of2.cdeevent"].map { "\(plain)/\($0)" })
        #expect(fromWrapped.status == 0, "\(fromWrapped.stderr)")
        #expect(fromWrapped.stdout == fromPlain.stdout)
        #expect(fromWrapped.stdout.contains("PHOTO-1"))
    }
}
