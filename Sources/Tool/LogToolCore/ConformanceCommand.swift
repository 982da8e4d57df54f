import EnsemblesToolkit
import ArgumentParser
import Foundation

extension FormatError.Code {
    /// `conformance` without `--fixtures` finds no kit beside its source tree (Spec/merge.md 9.8).
    static let conformanceNoFixtures = Self("conformance.no-fixtures")
    /// `--engine` cannot be started: missing, not executable, or the shell's 126 or 127 (9.8).
    static let conformanceEngineUnavailable = Self("conformance.engine-unavailable")
}

/// `logtool conformance`: runs a suite of the conformance kit against this engine or another
/// one (Spec/merge.md 9.8, 9.9).
struct Conformance: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "conformance",
        abstract: "Run a suite of the conformance kit against this engine or an external one.",
        discussion: """
            Without --suite, every folder inside FIXTURES is one merge case: its case.json command \
            (["merge", ARGS...]) runs in the case folder. Exit code 0: standard output must be \
            expected/state.json byte for byte, plus one LF. Exit code 1: standard output must be \
            empty and the finding lines on standard error (Spec/merge.md 5.9) must be exactly the \
            entries of expected/error.json (code, number, files, details). With --suite, the cases \
            of that fixture family run as Spec/merge.md 9.9 says. Without --fixtures, the Fixtures \
            folder of the source tree this logtool was built in is used.

            Prints PASS, FAIL (with the command it ran, the Spec rule the case pins and the \
            differences), XFAIL or XPASS per case and ends with `N passed, N failed`. Exit status: \
            0 every case as expected, 1 a case failed or passed unexpectedly, or no case ran, 2 \
            usage error or an engine that cannot be started.

            Examples:
              logtool conformance
              logtool conformance --engine 'python3 merge.py' --expected-failures xfail
              logtool conformance --suite v2-binary --engine ./my-engine
              logtool conformance --case 'device-*' --timeout 30
              logtool conformance --fixtures kit/Fixtures/merge --json
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The folder of cases (default: the suite's folder in Fixtures beside this logtool's source tree; Fixtures/merge without --suite).",
            valueName: "DIR"),
        completion: .directory)
    var fixtures: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The fixture family to run: \(ConformanceSuite.allCases.map(\.rawValue).joined(separator: ", ")) (default: every case of Fixtures/merge).",
            valueName: "SUITE"))
    var suite: ConformanceSuite?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A program or shell command that takes the arguments of the suite's logtool command (default: this logtool); paths in it are relative to this folder.",
            valueName: "COMMAND"))
    var engine: String?

    @Option(
        name: .customLong("case"),
        help: ArgumentHelp("Run only the cases whose name matches PATTERN (a name, or a pattern with * ? [...]); repeatable.", valueName: "PATTERN"))
    var cases: [String] = []

    @Option(name: .long, help: ArgumentHelp("Stop a case's engine after this many seconds; the case fails.", valueName: "SECONDS"))
    var timeout: Double = 300

    @Option(
        name: .long,
        help: ArgumentHelp("A file naming, one per line, the cases the engine is known to fail; the run passes only if exactly those fail.", valueName: "FILE"),
        completion: .file())
    var expectedFailures: String?

    @Flag(name: .long, help: "Print one JSON report instead of text.")
    var json = false

    func validate() throws {
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds") }
    }

    func run() throws {
        let executable = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        let family = suite?.folderName ?? "merge"
        guard
            let root = fixtures.map({ URL(fileURLWithPath: $0) })
                ?? ConformanceRunner.defaultFixtures(executable: executable).map({ $0.deletingLastPathComponent().appendingPathComponent(family) })
        else {
            writeErrors(
                [FormatError(.conformanceNoFixtures, "no Fixtures/\(family) folder beside this logtool's source tree; give --fixtures DIR")], json: json)
            throw ToolExit(status: .usage)
        }
        let found: [ConformanceRunner.Case]?
        if let suite { found = suite.cases(in: root) } else { found = ConformanceRunner.cases(in: root) }
        guard let allCases = found else {
            writeErrors([FormatError(.folderNotFound, "not a folder that can be listed", location: .init(file: root.path))], json: json)
            throw ToolExit(status: .usage)
        }
        var listed: [String] = []
        if let expectedFailures {
            guard let text = try? String(contentsOfFile: expectedFailures, encoding: .utf8) else {
                writeErrors([FormatError(.fileUnreadable, "cannot be read as UTF-8 text", location: .init(file: expectedFailures))], json: json)
                throw ToolExit(status: .usage)
            }
            listed = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
        let chosenEngine: ConformanceRunner.Engine
        if let engine {
            do {
                chosenEngine = try ConformanceRunner.Engine.resolve(engine, from: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            } catch {
                writeErrors([FormatError(.conformanceEngineUnavailable, error.message)], json: json)
                throw ToolExit(status: .usage)
            }
        } else {
            chosenEngine = .logtool(executable)
        }
        let runner = ConformanceRunner(engine: chosenEngine, timeout: timeout)
        var errors = listed.filter { name in !allCases.contains { $0.name == name } }.map { "--expected-failures names \($0), which is not a case" }
        let selected = cases.isEmpty ? allCases : allCases.filter { testCase in cases.contains { globMatches($0, testCase.name) } }
        errors += cases.filter { pattern in !allCases.contains { globMatches(pattern, $0.name) } }.map { "--case \($0) matches no case" }
        if allCases.isEmpty { errors.append("no case found in \(root.path): every folder inside it is a case (a case folder itself is not a kit)") }

        var results: [JSONValue] = []
        var passed = 0, failed = 0, expected = 0
        for testCase in selected {
            let report: ConformanceRunner.Report
            do {
                report = try runner.report(testCase)
            } catch {
                // An engine that cannot start fails every case the same way: one error, now.
                writeErrors([FormatError(.conformanceEngineUnavailable, error.message)], json: json)
                throw ToolExit(status: .usage)
            }
            let differences = report.differences
            let isListed = listed.contains(testCase.name)
            let verdict: String
            switch (differences.isEmpty, isListed) {
            case (true, false): verdict = "pass"; passed += 1
            case (false, false): verdict = "fail"; failed += 1
            case (false, true): verdict = "expected-failure"; expected += 1
            case (true, true): verdict = "unexpected-pass"; failed += 1
            }
            results.append(
                .object(
                    JSONObject([
                        ("name", .string(testCase.name)), ("verdict", .string(verdict)),
                        ("command", report.command.map(JSONValue.string) ?? .null), ("rule", report.rule.map(JSONValue.string) ?? .null),
                        ("differences", .array(differences.map(JSONValue.string))),
                    ])))
            if !json {
                let tag = ["pass": "PASS", "fail": "FAIL", "expected-failure": "XFAIL", "unexpected-pass": "XPASS"][verdict] ?? verdict
                var lines = ["\(tag) \(escaped(testCase.name))"]
                if !differences.isEmpty {
                    if let command = report.command { lines.append("  command: \(escaped(command))") }
                    if let rule = report.rule { lines.append("  rule: \(escaped(rule))") }
                }
                lines += differences.map { "  \(escaped($0))" }
                writeStandardOutput(lines.joined(separator: "\n") + "\n")
            }
        }
        failed += errors.count
        if json {
            writeJSON(
                .object(
                    JSONObject([
                        ("fixtures", .string(root.path)), ("suite", suite.map { .string($0.rawValue) } ?? .null), ("cases", .array(results)),
                        ("passed", JSONValue(Int64(passed))), ("failed", JSONValue(Int64(failed))), ("expectedFailures", JSONValue(Int64(expected))),
                        ("errors", .array(errors.map(JSONValue.string))),
                    ])))
        } else {
            for error in errors { writeStandardOutput("error: \(escaped(error))\n") }
            if !listed.isEmpty { writeStandardOutput("\(expected) failed as expected (--expected-failures)\n") }
            writeStandardOutput("\(passed) passed, \(failed) failed\n")
        }
        if failed > 0 { throw ToolExit(status: .problemsFound) }
    }
}

/// Whether `name` matches the shell pattern `pattern` (`*`, `?`, `[...]`; `*` also matches
/// `/`, so `invalid/*` and `*bad-magic*` both work).
func globMatches(_ pattern: String, _ name: String) -> Bool {
    fnmatch(pattern, name, 0) == 0
}
