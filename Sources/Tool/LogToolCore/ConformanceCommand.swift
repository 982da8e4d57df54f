import ArgumentParser
import Foundation
import JSONDocument

/// `logtool conformance`: runs the golden merge cases against this engine or another one.
struct Conformance: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the golden merge fixtures against this engine or an external one.",
        discussion: """
        Each folder of FIXTURES with a case.json is one case: its command (["merge", ARGS...]) runs \\
        in the case folder, and its output is compared with expected/state.json, or its exit \\
        status 1 and error codes with expected/error.json. --engine runs COMMAND ARGS... through \\
        /bin/sh instead: any program that takes the arguments of `logtool merge` and prints the \\
        state JSON. Prints PASS or FAIL per case, and ends with `N passed, N failed`. Exit status: \\
        0 all passed, 1 some failed, 2 usage error.
        """
    )

    @Option(name: .long, help: "The folder of cases.")
    var fixtures: String = "Fixtures/merge"

    @Option(name: .long, help: "A command that takes the arguments of `logtool merge` (default: this logtool).")
    var engine: String?

    func run() throws {
        let root = URL(fileURLWithPath: fixtures)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root.path) else {
            writeStandardError("logtool: \(fixtures): no such folder")
            throw ToolExit(status: .usage)
        }
        var passed = 0, failed = 0
        for name in names.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let folder = root.appendingPathComponent(name)
            guard let caseData = FileManager.default.contents(atPath: folder.appendingPathComponent("case.json").path) else { continue }
            let failures = runCase(folder: folder, caseData: caseData)
            if failures.isEmpty {
                passed += 1
                writeStandardOutput("PASS \(name)\n")
            } else {
                failed += 1
                writeStandardOutput("FAIL \(name)\n" + failures.map { "  \($0)\n" }.joined())
            }
        }
        writeStandardOutput("\(passed) passed, \(failed) failed\n")
        if failed > 0 { throw ToolExit(status: .problemsFound) }
    }

    /// What is wrong with one case's result; empty when it passes.
    private func runCase(folder: URL, caseData: Data) -> [String] {
        guard let info = try? JSONParser.parse(caseData), let command = info[JSONPointer(["command"])]?.arrayValue?.compactMap(\.stringValue),
              command.first == "merge" else {
            return ["case.json has no command [\"merge\", ...]"]
        }
        let arguments = Array(command.dropFirst())
        let process = Process()
        if let engine {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", engine + " \"$@\"", "engine"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).standardizedFileURL
            process.arguments = ["merge"] + arguments
            if !(process.executableURL.map { FileManager.default.isExecutableFile(atPath: $0.path) } ?? false),
               let path = Bundle.main.executablePath {
                process.executableURL = URL(fileURLWithPath: path)
            }
        }
        process.currentDirectoryURL = folder
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do {
            try process.run()
        } catch {
            return ["the engine could not be started: \(error.localizedDescription)"]
        }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let expectedState = folder.appendingPathComponent("expected/state.json")
        if let expected = FileManager.default.contents(atPath: expectedState.path) {
            guard process.terminationStatus == 0 else {
                return ["exit status \(process.terminationStatus), expected 0", "stderr: \(stderr.prefix(500))"]
            }
            guard let want = try? JSONParser.parse(expected) else { return ["expected/state.json is not JSON"] }
            guard let got = try? JSONParser.parse(stdout) else { return ["the output is not JSON: \(String(decoding: stdout.prefix(200), as: UTF8.self))"] }
            return Self.differences(want, got, at: .root, limit: 10)
        }
        guard let errorData = FileManager.default.contents(atPath: folder.appendingPathComponent("expected/error.json").path),
              let expected = try? JSONParser.parse(errorData) else {
            return ["the case has neither expected/state.json nor expected/error.json"]
        }
        var problems: [String] = []
        if process.terminationStatus != 1 { problems.append("exit status \(process.terminationStatus), expected 1") }
        if !stdout.isEmpty { problems.append("something was printed on standard output") }
        for error in expected[JSONPointer(["errors"])]?.arrayValue ?? [] {
            guard let code = error[JSONPointer(["code"])]?.stringValue else { continue }
            let number = error[JSONPointer(["number"])]?.numberValue?.int64Value
            if !stderr.contains(code) || (number.map { !stderr.contains(String($0)) } ?? false) {
                problems.append("expected \(code)\(number.map { " (\($0))" } ?? "") on standard error; got: \(stderr.prefix(300))")
            }
        }
        return problems
    }

    /// Readable differences between two JSON values, by pointer.
    static func differences(_ want: JSONValue, _ got: JSONValue, at pointer: JSONPointer, limit: Int) -> [String] {
        guard want != got else { return [] }
        switch (want, got) {
        case (.object(let a), .object(let b)):
            var result: [String] = []
            for key in Set(a.keys + b.keys).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) where result.count < limit {
                switch (a[key], b[key]) {
                case (let x?, let y?): result += differences(x, y, at: pointer / key, limit: limit - result.count)
                case (let x?, nil): result.append("at \(pointer / key): missing, expected \(JSONWriter().string(x))")
                case (nil, let y?): result.append("at \(pointer / key): unexpected \(JSONWriter().string(y))")
                case (nil, nil): break
                }
            }
            return result
        default:
            return ["at \(pointer.displayString): expected \(JSONWriter().string(want)), got \(JSONWriter().string(got))"]
        }
    }
}
