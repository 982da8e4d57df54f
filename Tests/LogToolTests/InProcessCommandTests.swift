import ArgumentParser
import Foundation
import Testing
import JSONDocument
@testable import LogToolCore

/// Commands run in process, with their exact output and exit status (the way
/// swift-argument-parser tests its commands). The expected texts are written out by hand from
/// the Spec: the finding-line grammar (merge.md 5.9), the fixtures' expected states, the usage
/// rules (README 6.1).
@Suite("Commands in process: exact output")
struct InProcessCommandTests {
    static let root = Run.packageRoot.path

    @Test("every command names itself, and the names are the ones the Spec and README use")
    func commandNames() {
        func names(_ command: any ParsableCommand.Type) -> [String] {
            let configuration = command.configuration
            let own = configuration.commandName ?? "(unnamed: \(command))"
            return [own] + configuration.subcommands.flatMap { names($0).map { "\(own) \($0)" } }
        }
        #expect(
            names(LogTool.self) == [
                "logtool", "logtool inspect", "logtool verify", "logtool diff", "logtool history", "logtool timeline", "logtool convert",
                "logtool merge", "logtool rebase", "logtool repair", "logtool generate", "logtool fetch", "logtool conformance",
                "logtool validate", "logtool kit", "logtool kit decode", "logtool kit encode", "logtool kit blob", "logtool kit unwrap",
                "logtool kit file-name", "logtool kit model",
            ])
    }

    @Test("merge prints the state and one LF, nothing on standard error")
    func mergeState() throws {
        let run = LogTool.runCapturing(arguments: ["merge", "\(Self.root)/Fixtures/merge/baseline-covers/cloud/E"])
        #expect(run.status == 0)
        #expect(run.stderr == "")
        #expect(
            run.stdout
                == #"{"entities":{"Item":{"i1":{"count":1,"tags":["t1","t2"],"title":"base"},"i4":{"title":"four"}},"Tag":{"t1":{"name":"T1"},"t2":{"name":"T2"}}}}"#
                + "\n")
    }

    @Test("merge to standard output writes the document held during the checks whole, and what follows the part held")
    func heldDocument() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("held-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let generated = LogTool.runCapturing(arguments: [
            "generate", scratch.path, "--no-progress", "--stores", "2", "--objects", "30000", "--changes", "30000", "--seed", "5",
        ])
        #expect(generated.status == 0, "\(generated.stderr)")
        let arguments = ["merge", scratch.appendingPathComponent("cloud").path, "--model", scratch.appendingPathComponent("Model.xcdatamodeld").path]
        // With --sqlite the document is written once the checks are done, nothing held: the
        // reference for the two held ones, whole (the default budget) and resumed after its
        // first batch of objects (a budget of one byte).
        let direct = LogTool.runCapturingBytes(arguments: arguments + ["--sqlite", scratch.appendingPathComponent("state.db").path])
        let held = LogTool.runCapturingBytes(arguments: arguments)
        let resumed = HeldDocument.$budget.withValue(1) { LogTool.runCapturingBytes(arguments: arguments) }
        #expect(direct.status == 0 && held.status == 0 && resumed.status == 0)
        // Compared as one answer each: a failed comparison of two documents element by element
        // takes minutes to describe.
        let heldSame = held.stdout == direct.stdout, resumedSame = resumed.stdout == direct.stdout
        #expect(heldSame, "held: \(held.stdout.count) bytes, direct: \(direct.stdout.count)")
        #expect(resumedSame, "resumed: \(resumed.stdout.count) bytes, direct: \(direct.stdout.count)")
        // More objects than one batch (16,384), so that the resumed one was resumed.
        let entities = try #require(try JSONParser.parse([UInt8](direct.stdout.dropLast()))[JSONPointer(["entities"])]?.objectValue)
        let objects = entities.keys.reduce(0) { count, entity in count + (entities[entity]?.objectValue?.count ?? 0) }
        #expect(objects > 16_384)
    }

    @Test("an integrity failure prints one finding line each on standard error, nothing on standard output")
    func mergeFindings() throws {
        let events = "\(Self.root)/Fixtures/merge/revision-gap-200/cloud/E/events"
        let run = LogTool.runCapturing(arguments: ["merge", "\(Self.root)/Fixtures/merge/revision-gap-200/cloud/E/"])
        #expect(run.status == 1)
        #expect(run.stdout == "")
        #expect(
            run.stderr == """
                merge.revision-gap (200) \(events)/3_A_3.cdeevent [store=A, first=2, last=2]: store A misses revision 2
                merge.revision-gap (200) \(events)/7_C_5.cdeevent [store=C, first=3, last=4]: store C misses revisions 3-4
                merge.revision-gap (200) \(events)/8_C_8.cdeevent [store=C, first=6, last=7]: store C misses revisions 6-7

                """)
    }

    @Test("verify's text: the growth line rounds the compaction and says why a rebase is recommended")
    func verifyText() throws {
        // Compaction and recommendation from the cases' expected documents (0.25 and false, 0.5
        // and true: no baseline takes part, diagnostics.md 6.4 rule 1); byte counts are the files'.
        let withBaseline = LogTool.runCapturing(arguments: ["verify", "\(Self.root)/Fixtures/verify/healthy-with-baseline/cloud"])
        #expect(withBaseline.status == 0)
        #expect(
            withBaseline.stdout == """
                Ensemble E (E)
                  Growth: events 1494 bytes in 3 files, baselines 1062, data 2048, debris 0 bytes
                    0 covered events; rebase compaction 0.25; rebase not recommended

                0 errors, 0 warnings, 0 infos

                """)
        let without = LogTool.runCapturing(arguments: ["verify", "\(Self.root)/Fixtures/verify/healthy/cloud/E"])
        #expect(without.stdout.hasPrefix("Ensemble E\n"))
        #expect(without.stdout.contains("; rebase compaction 0.50; rebase recommended: no baseline takes part\n"))
    }

    @Test("usage errors: exit 2, one message starting with the code, nothing on standard output")
    func usageErrors() throws {
        let existing = "\(Self.root)/Fixtures/merge/baseline-covers/case.json"
        let refused = LogTool.runCapturing(arguments: ["merge", "--out", existing, "\(Self.root)/Fixtures/merge/baseline-covers/cloud/E"])
        #expect(refused.status == 2)
        #expect(refused.stdout == "")
        #expect(refused.stderr == "merge.destination-exists \(existing): already exists; give --force to replace it\n")
        let missing = LogTool.runCapturing(arguments: ["merge", "/nonexistent-input"])
        #expect(missing.status == 2)
        #expect(missing.stderr == "folder.not-found /nonexistent-input: no such file or folder\n")
        // A file where only a folder will do is not called missing.
        let file = LogTool.runCapturing(arguments: ["verify", existing])
        #expect(file.status == 2)
        #expect(file.stderr == "folder.not-found \(existing): not a folder (inspect reads a single file)\n")
        let version = LogTool.runCapturing(arguments: ["merge", "--model-version", "X", "\(Self.root)/Fixtures/merge/baseline-covers/cloud/E"])
        #expect(version.status == 2)
        #expect(version.stderr.hasPrefix("Error: --model-version needs --model\n"))
    }

    @Test("-q writes no warning; results and the exit status are unchanged")
    func quiet() throws {
        let folder = "\(Self.root)/Fixtures/folders/example/cloud"
        let loud = LogTool.runCapturing(arguments: ["merge", folder])
        #expect(loud.stderr.hasPrefix("warning: 33 events name the model that wrote them"))
        for flag in ["-q", "--quiet"] {
            let quiet = LogTool.runCapturing(arguments: ["merge", flag, folder])
            #expect(quiet.status == loud.status && quiet.stdout == loud.stdout)
            #expect(quiet.stderr == "")
        }
    }

    @Test("the progress line: done of total, percent, then rate and time left once a second has passed")
    func progressLine() {
        #expect(ProgressLine.render(step: "events replayed", done: 0, total: 0, elapsed: 5) == "events replayed: 0/0")
        #expect(ProgressLine.render(step: "events replayed", done: 250, total: 1000, elapsed: 0.5) == "events replayed: 250/1000 (25%)")
        // 300 in 2 s: 150/s; 700 left at that rate: 4.67 s, shown rounded up.
        #expect(ProgressLine.render(step: "events replayed", done: 300, total: 1000, elapsed: 2) == "events replayed: 300/1000 (30%), 150/s, 0:05 left")
        #expect(ProgressLine.render(step: "s", done: 1, total: 10_000, elapsed: 1) == "s: 1/10000 (0%), 1/s, 166:39 left")
        #expect(ProgressLine.render(step: "s", done: 10, total: 10, elapsed: 4) == "s: 10/10 (100%), 3/s")
    }

    @Test("--progress and --no-progress decide over the terminal; --quiet draws none unless asked")
    func progressChoice() throws {
        func options(_ arguments: [String]) throws -> OutputOptions { try OutputOptions.parse(arguments) }
        #expect(try options([]).drawsProgress(onTerminal: true))
        #expect(try !options([]).drawsProgress(onTerminal: false))
        #expect(try options(["--progress"]).drawsProgress(onTerminal: false))
        #expect(try !options(["--no-progress"]).drawsProgress(onTerminal: true))
        #expect(try !options(["-q"]).drawsProgress(onTerminal: true))
        #expect(try options(["-q", "--progress"]).drawsProgress(onTerminal: false))
        #expect(throws: (any Error).self) { try options(["--progress", "--no-progress"]) }
    }

    @Test("every command's errors have one shape: a finding line, or with --json one errors document and nothing on standard error")
    func errorShapes() throws {
        let missingModel = "\(Self.root)/no-such-model.xcdatamodeld"
        let folder = "\(Self.root)/Fixtures/merge/baseline-covers/cloud/E"
        let existing = "\(Self.root)/Fixtures/merge/baseline-covers/case.json"
        // Each command as a user would type it; the expected line written out from README 5.4.
        let cases: [([String], String)] = [
            (["merge", "--model", missingModel, folder], "datamodel.unreadable \(missingModel): "),
            (["verify", "--model", missingModel, folder], "datamodel.unreadable \(missingModel): "),
            (["convert", folder, existing], "convert.destination-exists \(existing): "),
            (["timeline", folder, "-o", existing], "timeline.destination-exists \(existing): already exists; give --force to replace it"),
            (["verify", existing], "folder.not-found \(existing): not a folder (inspect reads a single file)"),
        ]
        for (arguments, prefix) in cases {
            let text = LogTool.runCapturing(arguments: arguments)
            #expect(text.status == 2 && text.stdout == "", "\(arguments)")
            #expect(text.stderr.hasPrefix(prefix) && text.stderr.filter { $0 == "\n" }.count == 1, "\(arguments): \(text.stderr)")
            let code = String(prefix.prefix { $0 != " " })
            let json = LogTool.runCapturing(arguments: [arguments[0], "--json"] + arguments.dropFirst())
            #expect(json.status == 2 && json.stderr == "", "\(arguments) --json: \(json.stderr)")
            let errors = try JSONParser.parse(Array(json.stdout.utf8))[JSONPointer(["errors"])]?.arrayValue ?? []
            #expect(errors.count == 1 && errors.first?[JSONPointer(["code"])] == .string(code), "\(arguments) --json: \(json.stdout)")
        }
    }

    @Test("history of an object no event changes says so, exit 0 (verify.md 11, 12)")
    func historyOfNothing() {
        let run = LogTool.runCapturing(arguments: ["history", "--entity", "Item", "--id", "nope", "\(Self.root)/Fixtures/merge/baseline-covers/cloud/E"])
        #expect(run.status == 0 && run.stderr == "")
        #expect(run.stdout == "History of Item nope\n  no event or baseline changes this object (entity and identifier are compared exactly as written)\n")
    }

    @Test("--version")
    func version() {
        let run = LogTool.runCapturing(arguments: ["--version"])
        #expect(run.status == 0)
        #expect(run.stdout == "logtool 0.14.4 (Spec 0.14.4, conformance kit 1.8.0)\n")
        #expect(run.stderr == "")
    }
}
