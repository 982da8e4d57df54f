import Foundation
import Testing
import JSONDocument
import SchemaValidation

/// Runs the built `logtool` binary as a user would and checks output and exit status.
struct Run {
    var status: Int32
    var stdout: String
    var stderr: String

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The products folder holds both the test bundle and `logtool`.
    static var binary: URL {
        let candidates = [
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        ]
        return candidates.map { $0.appendingPathComponent("logtool") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0].appendingPathComponent("logtool")
    }

    init(_ arguments: String...) throws { try self.init(arguments) }

    init(_ arguments: [String]) throws { try self.init(arguments: arguments, in: Self.packageRoot) }

    /// `standardOutput`, when given, receives standard output in place of a pipe (for example
    /// `/dev/full`); `stdout` is then empty.
    init(arguments: [String], in directory: URL, standardOutput: FileHandle? = nil) throws {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe(), err = Pipe()
        process.standardOutput = standardOutput ?? out
        process.standardError = err
        try process.run()
        if standardOutput != nil { try? out.fileHandleForWriting.close() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        status = process.terminationStatus
        stdout = String(decoding: outData, as: UTF8.self)
        stderr = String(decoding: errData, as: UTF8.self)
    }
}

/// A folder for what lives as long as the test process (copies a test server serves, its dates
/// file): removed when the process exits, so a run leaves nothing in the temporary folder.
enum ProcessScratch {
    static let root: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("logtool-tests-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        atexit { try? FileManager.default.removeItem(at: ProcessScratch.root) }
        return url
    }()

    static func path(_ name: String) -> URL { root.appendingPathComponent(name) }
}

@Suite("logtool end to end")
struct LogToolEndToEndTests {
    @Test("inspect prints a readable report of the example folder and exits 0")
    func inspectText() throws {
        let run = try Run("inspect", "Fixtures/folders/example/cloud")
        #expect(run.status == 0)
        #expect(run.stdout.contains("Ensemble MainStore"))
        #expect(run.stdout.contains("[conflictedCopy]"))
        #expect(run.stdout.contains("(legacy name)"))
        #expect(run.stdout.contains("Summary: 1 ensemble, 3 stores, 31 events, 2 baselines, 1 data file, 4 debris, 0 unreadable"))
    }

    @Test(
        "inspect --json prints a document valid against Spec/schemas/inspect.schema.json",
        arguments: [
            "Fixtures/folders/example/cloud", "Fixtures/folders/damaged/cloud",
            "Fixtures/v2-json/valid/01-attribute-kinds.json", "Fixtures/v2-json/multipart/7_STORE-A_3_2of2.cdeevent",
            "Fixtures/v2-json/invalid/json-trailing-comma.json",
        ])
    func inspectJSON(path: String) throws {
        let run = try Run("inspect", "--json", path)
        let document = try JSONParser.parse(run.stdout)
        #expect(try BundledSchema.inspect.validator().validate(document).isEmpty)
        #expect(run.status == (path.contains("damaged") || path.contains("invalid") ? 1 : 0))
    }

    @Test("inspect lists a binary event's unknown members by the pointers of the same event in JSON (Spec/v2-binary.md 15)")
    func binaryUnknownMembers() throws {
        var pointers: [[JSONValue?]] = []
        for file in ["example-3.bin", "example-3.json"] {
            let run = try Run("inspect", "--json", "Fixtures/v2-binary/valid/\(file)")
            #expect(run.status == 0)
            pointers.append((try JSONParser.parse(run.stdout)[JSONPointer(["unknownKeys"])]?.arrayValue ?? []).map { $0[JSONPointer(["pointer"])] })
        }
        #expect(pointers[0] == [.string("/changesByEntity/Gauge/0/properties/3/x-unit"), .string("/x-origin")])
        #expect(pointers[1] == pointers[0])
    }

    @Test("an unreadable file is named on the report with its reason, and the exit status is 1")
    func unreadableFile() throws {
        let run = try Run("inspect", "Fixtures/v2-json/invalid/json-trailing-comma.json")
        #expect(run.status == 1)
        #expect(run.stdout.contains("json.trailing-comma"))
        #expect(run.stdout.contains("--lenient"))
    }

    @Test(
        "usage errors exit 2 with a message on stderr and nothing on stdout",
        arguments: [
            ["inspect", "Fixtures/does-not-exist"],
            ["inspect", "Sources"],
            ["inspect", "--bogus", "Fixtures"],
            ["inspect"],
            ["validate", "--schema", "nope", "Package.swift"],
            ["frobnicate"],
        ])
    func usageErrors(arguments: [String]) throws {
        let run = try Run(arguments)
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(!run.stderr.isEmpty)
    }

    @Test("help exits 0")
    func help() throws {
        let run = try Run("--help")
        #expect(run.status == 0)
        #expect(run.stdout.contains("inspect"))
    }

    @Test("validate reports schema verdicts per file as JSON")
    func validate() throws {
        let run = try Run(
            "validate", "--json", "--schema", "v2-event",
            "Fixtures/v2-json/valid/01-attribute-kinds.json", "Fixtures/v2-json/invalid/schema-event-type-150.json",
            "Fixtures/v2-json/invalid/json-unexpected-end.json")
        #expect(run.status == 1)
        let verdicts = try JSONParser.parse(run.stdout)[JSONPointer(["files"])]?.arrayValue ?? []
        #expect(verdicts.map { $0[JSONPointer(["verdict"])] } == [.string("valid"), .string("invalid"), .string("unparseable")])
    }

    @Test("validate refuses a FIFO, and a file over the JSON limit from its size, without reading it")
    func validateBounded() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let fifo = scratch.appendingPathComponent("fifo.json"), large = scratch.appendingPathComponent("large.json")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // Sparse: 300 MiB that take no room, over the 256 MiB a JSON document may have.
        #expect(FileManager.default.createFile(atPath: large.path, contents: nil) && truncate(large.path, 300 * 1024 * 1024) == 0)
        let run = try ChildProcess.run(
            Run.binary, ["validate", "--json", "--schema", "v2-event", fifo.path, large.path], scratch: scratch, killAfterSeconds: 60,
            killAboveMegabytes: 1_024)
        #expect(run.killed == nil)
        let verdicts = try JSONParser.parse(Array(run.output.utf8.prefix { $0 != UInt8(ascii: "\n") }))[JSONPointer(["files"])]?.arrayValue ?? []
        #expect(verdicts.map { $0[JSONPointer(["errors", "0", "code"])] } == [.string("file.unreadable"), .string("json.too-large")], "\(run.output)")
        #expect(run.megabytes < 100, "\(run.megabytes) MB: the large file was read")
    }
}
