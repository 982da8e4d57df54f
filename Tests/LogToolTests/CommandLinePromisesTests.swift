import Foundation
import Testing
import JSONDocument
import EventCodecs

/// The promises every command keeps (Spec/README.md 6.1, issue 13): one rule for destinations,
/// a failed write to standard output is an error and exit 1, `--version`.
@Suite("Command-line promises")
struct CommandLinePromisesTests {
    static let folder = "Fixtures/merge/baseline-covers/cloud/E"

    /// Arguments that create `destination`, for each command that creates a path.
    static let creators: [(name: String, arguments: @Sendable (String) -> [String], code: String)] = [
        ("merge --out", { ["merge", "--out", $0, Self.folder] }, "merge.destination-exists"),
        ("merge --sqlite", { ["merge", "--sqlite", $0, Self.folder] }, "sqlite.destination-exists"),
        ("convert", { ["convert", Self.folder, $0] }, "convert.destination-exists"),
        ("rebase", { ["rebase", Self.folder, "--out", $0] }, "rebase.destination-exists"),
        ("generate", { ["generate", $0, "--changes", "50"] }, "convert.destination-exists"),
    ]

    @Test("an existing destination is refused without --force and left alone; --force replaces it", arguments: 0..<5)
    func existing(index: Int) throws {
        let creator = Self.creators[index]
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let destination = scratch.appendingPathComponent("dest")
        try Data("old".utf8).write(to: destination)
        let refused = try Run(creator.arguments(destination.path))
        #expect(refused.status == 2, "\(creator.name): \(refused.stderr)")
        #expect(refused.stderr.contains(creator.code), "\(creator.name): \(refused.stderr)")
        #expect(try Data(contentsOf: destination) == Data("old".utf8))
        let forced = try Run(creator.arguments(destination.path) + ["--force"])
        #expect(forced.status == 0, "\(creator.name): \(forced.stderr)")
        #expect((try? Data(contentsOf: destination)) != Data("old".utf8), "\(creator.name) did not replace the destination")
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0 != "dest" }
        #expect(left.isEmpty, "\(creator.name) left \(left)")
    }

    @Test("a missing parent folder is refused and never created", arguments: 0..<5)
    func missingParent(index: Int) throws {
        let creator = Self.creators[index]
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try Run(creator.arguments(scratch.appendingPathComponent("missing/dest").path))
        #expect(run.status == 2, "\(creator.name): \(run.stderr)")
        #expect(run.stderr.contains("file.parent-missing"), "\(creator.name): \(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
    }

    @Test(
        "a failed write to standard output is a message and exit 1, for every command that prints",
        arguments: [
            ["inspect", "Fixtures/folders/example/cloud"], ["verify", "Fixtures/folders/example/cloud"],
            ["merge", folder], ["validate", "--schema", "v2-event", "Fixtures/v2-json/valid/01-attribute-kinds.json"],
            ["history", "--entity", "Item", "--id", "i1", folder], ["inspect", "--json", "Fixtures/folders/example/cloud"],
        ])
    func fullDevice(arguments: [String]) throws {
        let run = try Run(arguments: arguments, in: Run.packageRoot, standardOutput: try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full")))
        #expect(run.status == 1, "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains("standard output"), "\(arguments): \(run.stderr)")
    }

    @Test("a reader that closes standard output early (| head) gets no message and the command's own status")
    func closedPipe() throws {
        for (arguments, expected) in [(["inspect", "Fixtures/folders/example/cloud"], Int32(0)), (["verify", "Fixtures/folders/damaged/cloud"], 1)] {
            let process = Process()
            process.executableURL = Run.binary
            process.arguments = arguments
            process.currentDirectoryURL = Run.packageRoot
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            // The read end is closed before the command writes, as `head -0` would.
            try out.fileHandleForReading.close()
            try process.run()
            try out.fileHandleForWriting.close()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationReason == .exit && process.terminationStatus == expected, "\(arguments): \(stderr)")
            #expect(!stderr.contains("standard output"), "\(arguments): \(stderr)")
        }
    }

    @Test("- reads an event file from standard input, and findings name it -")
    func standardInput() throws {
        func run(_ arguments: [String], input: URL) throws -> (status: Int32, stdout: String, stderr: String) {
            let process = Process()
            process.executableURL = Run.binary
            process.arguments = arguments
            process.currentDirectoryURL = Run.packageRoot
            process.standardInput = try FileHandle(forReadingFrom: input)
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, stdout, stderr)
        }
        let log = Run.packageRoot.appendingPathComponent("Fixtures/external/ensembles-1x/Integrator Test Fixtures/IntegratorMergeTestsFixture.json")
        let model = Run.packageRoot.appendingPathComponent("Fixtures/external/ensembles-1x/models/CDEStoreModificationEventTestsModel.xcdatamodeld").path
        let merged = try run(["merge", "--model", model, "-"], input: log)
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(
            merged.stdout + ""
                == (try String(
                    contentsOf: Run.packageRoot.appendingPathComponent("Fixtures/merge/original-IntegratorMergeTestsFixture/expected/state.json"),
                    encoding: .utf8)) + "\n")
        let cut = Run.packageRoot.appendingPathComponent("Fixtures/merge/json-bad-escape/extra/bad-escape.cdeevent")
        let failed = try run(["merge", "-"], input: cut)
        #expect(failed.status == 1)
        #expect(failed.stderr.hasPrefix("json.syntax - [offset=112]: "), "\(failed.stderr)")
        // validate and convert read `-` too; convert writes `-` to standard output, and only that.
        let event = Run.packageRoot.appendingPathComponent("Fixtures/merge/baseline-covers/cloud/E/events/5_BRAVO-STORE_1.cdeevent")
        #expect(try run(["validate", "-"], input: event) == (0, "-: valid\n", ""))
        #expect(try run(["validate", "-"], input: cut).status == 1)
        let source = try V2JSONDecoder().decodeEvent(try JSONParser.parse(Array(try Data(contentsOf: event)))).event
        let piped = try run(["convert", "-", "-"], input: event)
        #expect(piped.status == 0 && piped.stderr == "", "\(piped.stderr)")
        #expect(try V2JSONDecoder().decodeEvent(try JSONParser.parse(Array(piped.stdout.utf8))).event == source)
        let folder = try run(["convert", "Fixtures/merge/baseline-covers/cloud/E", "-"], input: event)
        #expect(folder.status == 2 && folder.stdout == "")
        #expect(!FileManager.default.fileExists(atPath: Run.packageRoot.appendingPathComponent("-").path))
    }

    @Test("--version names the tool, the Spec and the kit")
    func version() throws {
        let run = try Run("--version")
        #expect(run.status == 0)
        #expect(run.stdout == "logtool 0.14.4 (Spec 0.14.4, conformance kit 1.8.0)\n")
    }

    @Test("merge --json puts the findings in one document on standard output")
    func mergeJSON() throws {
        let run = try Run("merge", "--json", "Fixtures/merge/revision-gap-200/cloud/E")
        #expect(run.status == 1)
        #expect(run.stderr.isEmpty)
        let errors = try #require(try JSONParser.parse(Array(run.stdout.utf8))[JSONPointer(["errors"])]?.arrayValue)
        #expect(errors.count == 3)
        #expect(errors.first?[JSONPointer(["details", "store"])] == .string("A"))
    }

    @Test("without --model, events that name their model give a warning that says what differs")
    func modelWarning() throws {
        let run = try Run("merge", "Fixtures/merge/unknown-model-version-204/cloud/E")
        #expect(run.status == 0)
        #expect(run.stderr.contains("merge.model-not-given"))
        #expect(run.stderr.contains("inverse relationships are not kept"))
        let quiet = try Run("merge", Self.folder)
        #expect(!quiet.stderr.contains("merge.model-not-given"))
    }
}
