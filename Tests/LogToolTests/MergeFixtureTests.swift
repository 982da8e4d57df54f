import Foundation
import Testing
import JSONDocument
import LogToolCore

/// The golden merge cases of `Fixtures/merge`: each one as its own test (so that
/// `swift test --filter` runs one), and the `logtool conformance` runner as another
/// implementation would use it, including that it fails when it should.
@Suite("Merge fixtures")
struct MergeFixtureTests {
    static let root = Run.packageRoot.appendingPathComponent("Fixtures/merge")
    static let cases = ConformanceRunner.cases(in: root) ?? []

    @Test("the kit holds at least 50 cases")
    func enoughCases() {
        #expect(Self.cases.count >= 50)
    }

    @Test("golden case", arguments: cases)
    func goldenCase(_ testCase: ConformanceRunner.Case) {
        let differences = ConformanceRunner(engine: .logtool(Run.binary)).differences(testCase)
        #expect(differences.isEmpty, "\(testCase.name):\n\(differences.joined(separator: "\n"))")
    }

    /// The cases whose command is `merge` of one folder (the merges that write the state while
    /// the integrity checks run), with the exit code their `case.json` expects.
    static let singleFolderCases: [(testCase: ConformanceRunner.Case, arguments: [String], exitCode: Int)] = cases.compactMap { testCase in
        guard let data = try? Data(contentsOf: testCase.folder.appendingPathComponent("case.json")),
            case .object(let description)? = try? JSONParser.parse(Array(data)),
            case .array(let command)? = description["command"], let exitCode = description["exitCode"]?.numberValue?.int64Value
        else { return nil }
        let arguments = command.compactMap(\.stringValue)
        guard arguments.count == 2, arguments[0] == "merge", arguments[1].hasPrefix("cloud") else { return nil }
        return (testCase, Array(arguments.dropFirst()), Int(exitCode))
    }

    @Test(
        "merge --out of each single-folder case: the expected state in the file (written while the checks ran, or after), or no file; nothing else left beside it"
    )
    func mergeOut() throws {
        #expect(Self.singleFolderCases.count >= 20)
        for (testCase, arguments, exitCode) in Self.singleFolderCases {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("merge-out-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(at: scratch) }
            let out = scratch.appendingPathComponent("state.json")
            let run = try Run(arguments: ["merge", "--out", out.path] + arguments, in: testCase.folder)
            #expect(Int(run.status) == exitCode, "\(testCase.name): \(run.stderr)")
            #expect(run.stdout == "", "\(testCase.name)")
            let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
            if exitCode == 0 {
                let expected = try Data(contentsOf: testCase.folder.appendingPathComponent("expected/state.json")) + Data("\n".utf8)
                #expect(try Data(contentsOf: out) == expected, "\(testCase.name)")
                #expect(left == ["state.json"], "\(testCase.name): \(left)")
            } else {
                #expect(left.isEmpty, "\(testCase.name): \(left)")
            }
        }
    }

    @Test("conformance passes every case from any working directory, and ends with the count")
    func builtIn() throws {
        let run = try Run(arguments: ["conformance"], in: FileManager.default.temporaryDirectory)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.hasSuffix("\n\(Self.cases.count) passed, 0 failed\n"))
    }

    /// A state, an error and a device case: the engine's words are parsed once and run the
    /// same way for every case, and "golden case" above runs every case through this binary.
    @Test("cases pass when the engine is given as an external command: a state, an error and a device case")
    func external() throws {
        let chosen = ["original-DeleteUninserted", "revision-gap-200", "device-chains"]
        let run = try Run(["conformance", "--engine", "'\(Run.binary.path)' merge"] + chosen.flatMap { ["--case", $0] })
        #expect(run.status == 0, "\(run.stdout)")
        for name in chosen { #expect(run.stdout.contains("PASS \(name)\n"), "\(name)") }
        #expect(run.stdout.hasSuffix("\n\(chosen.count) passed, 0 failed\n"))
    }

    @Test("a folder without cases is a failure, not a pass")
    func noCase() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("no-cases-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let run = try Run("conformance", "--fixtures", empty.path)
        #expect(run.status == 1)
        #expect(run.stdout.contains("error: no case found in"))
        #expect(run.stdout.hasSuffix("0 passed, 1 failed\n"))
        // A single case folder is not a kit: its subfolders are not cases.
        let single = try Run("conformance", "--fixtures", "Fixtures/merge/revision-gap-200")
        #expect(single.status == 1)
        #expect(try Run("conformance", "--fixtures", "/nonexistent-\(UUID().uuidString)").status == 2)
    }

    /// An engine that reads the expected results of the case it runs in and prints them, with
    /// `mangle` applied to every file name of a finding: with the identity it passes every case.
    /// `body` gets the command; the script is removed when it returns.
    static func withReplayingEngine<T>(mangle: String, _ body: (String) throws -> T) throws -> T {
        let script = """
            import json, os, sys
            if os.path.exists('expected/device.json'):
                sys.stdout.write(open('expected/device.json').read() + '\\n'); sys.exit(json.load(open('case.json'))['exitCode'])
            if os.path.exists('expected/state.json'):
                sys.stdout.write(open('expected/state.json').read() + '\\n'); sys.exit(0)
            if not os.path.exists('expected/error.json'):
                code = json.load(open('case.json')).get('errorCode')
                if code: sys.stderr.write(code + ': replayed\\n')
                sys.exit(2)
            def field(s): return json.dumps(s) if s == '' or any(c in s for c in ',:[]="\\\\\\n') or s.startswith(('(', ' ')) or s.endswith(' ') else s
            for e in json.load(open('expected/error.json'))['errors']:
                files = [\(mangle) for f in e['files']]
                line = e['code'] + ('' if e['number'] is None else ' (%d)' % e['number'])
                line += ' ' + ', '.join(field(f) for f in files)
                d = e.get('details', {})
                if d: line += ' [' + ', '.join('%s=%s' % (k, field(str(v))) for k, v in d.items()) + ']'
                sys.stderr.write(line + ': replayed\\n')
            sys.exit(1)
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("replaying-engine-\(UUID().uuidString).py")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(script.utf8).write(to: file)
        return try body("python3 '\(file.path)'")
    }

    static var errorCases: [String] {
        cases.filter { FileManager.default.fileExists(atPath: $0.folder.appendingPathComponent("expected/error.json").path) }.map(\.name)
    }

    /// A case whose expected result is a state, which the replaying engine passes with any mangling.
    static let stateCase = "original-DeleteUninserted"

    /// `--case` arguments for every error case and ``stateCase``.
    static var errorCasesAndOneState: [String] { (errorCases + [stateCase]).flatMap { ["--case", $0] } }

    @Test("an engine that prints the expected findings passes; the same with wrong files fails every error case")
    func wrongFiles() throws {
        let faithful = try Self.withReplayingEngine(mangle: "f") { try Run("conformance", "--engine", $0) }
        #expect(faithful.status == 0, "\(faithful.stdout)")
        // The wrong files change nothing in the other cases: only the error cases and one state
        // case run (each case starts a Python engine; the faithful run above covers them all).
        let wrong = try Self.withReplayingEngine(mangle: "f + '.copy'") { try Run(["conformance", "--engine", $0] + Self.errorCasesAndOneState) }
        #expect(wrong.status == 1)
        #expect(!Self.errorCases.isEmpty)
        for name in Self.errorCases { #expect(wrong.stdout.contains("FAIL \(name)\n"), "\(name)") }
        #expect(wrong.stdout.contains("PASS \(Self.stateCase)\n"))
        #expect(wrong.stdout.hasSuffix("1 passed, \(Self.errorCases.count) failed\n"))
    }

    @Test("a wrong state fails with a difference by pointer; a right state in the wrong bytes fails too")
    func wrongState() throws {
        let run = try Run("conformance", "--engine", "echo '{\"entities\":{}}' #")
        #expect(run.status == 1)
        let integrator = Run.packageRoot.path + "/Fixtures/merge/original-IntegratorMergeTestsFixture"
        #expect(
            run.stdout.contains(
                "FAIL original-IntegratorMergeTestsFixture\n  command: cd \(integrator) && echo '{\"entities\":{}}' # --lenient --model "
                    + "../../external/ensembles-1x/models/CDEStoreModificationEventTestsModel.xcdatamodeld "
                    + "'../../external/ensembles-1x/Integrator Test Fixtures/IntegratorMergeTestsFixture.json'\n"))
        #expect(run.stdout.contains("\n  rule: merge.md 11 "))
        #expect(run.stdout.contains("\n  at /entities/Parent: missing"))
        #expect(run.stdout.contains("PASS original-DeleteUninserted\n"))
        let spaced = try Run("conformance", "--engine", "echo '{ \"entities\": {} }' #")
        #expect(
            spaced.stdout.contains(
                "\n  the state is right but its bytes differ from expected/state.json + LF, first at byte 1 (not canonical, or no single final LF)\n"))
        #expect(spaced.stdout.contains("FAIL original-DeleteUninserted\n  command: "))
    }

    @Test("--expected-failures: listed failures pass the run, a listed pass or an unknown name fails it")
    func expectedFailures() throws {
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("xfail-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: list) }
        try Data(("# known failures\n\n" + Self.errorCases.joined(separator: "\n") + "\n").utf8).write(to: list)
        let listed = try Self.withReplayingEngine(mangle: "f + '.copy'") {
            try Run(["conformance", "--engine", $0, "--expected-failures", list.path] + Self.errorCasesAndOneState)
        }
        #expect(listed.status == 0, "\(listed.stdout)")
        #expect(listed.stdout.contains("XFAIL \(Self.errorCases[0])\n"))
        #expect(listed.stdout.hasSuffix("\(Self.errorCases.count) failed as expected (--expected-failures)\n1 passed, 0 failed\n"))

        // This logtool passes the listed cases: each is an unexpected pass (only they are run).
        let unexpectedPass = try Run(["conformance", "--expected-failures", list.path, "--json"] + Self.errorCases.flatMap { ["--case", $0] })
        #expect(unexpectedPass.status == 1)
        let report = try JSONParser.parse(Array(unexpectedPass.stdout.utf8))
        #expect(report[JSONPointer(["failed"])] == JSONValue(Int64(Self.errorCases.count)))
        let verdicts = report[JSONPointer(["cases"])]?.arrayValue?.compactMap { $0[JSONPointer(["verdict"])]?.stringValue } ?? []
        #expect(verdicts.filter { $0 == "unexpected-pass" }.count == Self.errorCases.count)

        try Data("no-such-case\n".utf8).write(to: list)
        let unknown = try Run("conformance", "--expected-failures", list.path, "--case", "double-insert")
        #expect(unknown.status == 1)
        #expect(unknown.stdout.contains("error: --expected-failures names no-such-case, which is not a case"))
    }
}
