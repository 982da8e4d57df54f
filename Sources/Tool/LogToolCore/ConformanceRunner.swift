import Foundation
import EnsemblesToolkit

/// Runs the golden merge cases of a kit folder against a merge engine and says, per case,
/// what differs (Spec/merge.md 9.8). `logtool conformance` and the test suite both use it.
package struct ConformanceRunner: Sendable {
    /// The program that does the merging.
    package enum Engine: Sendable {
        /// An executable that takes `merge ARGS...` (this `logtool`).
        case logtool(URL)
        /// A shell command that takes the arguments of `logtool merge`, run as
        /// `/bin/sh -c 'COMMAND "$@"' engine ARGS...`.
        case shell(String)
    }

    /// One case folder of the kit.
    package struct Case: Sendable, CustomStringConvertible {
        package var name: String
        package var folder: URL
        package var description: String { name }
    }

    package var engine: Engine
    /// A case whose engine runs longer than this is stopped and fails.
    package var timeout: TimeInterval = 300

    package init(engine: Engine) { self.engine = engine }

    /// The cases of `root`: every folder directly inside it, in UTF-8 order of their names.
    /// Nil when `root` cannot be listed.
    package static func cases(in root: URL) -> [Case]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root.path) else { return nil }
        return names.sorted(by: utf8Precedes).compactMap { name in
            var isDirectory: ObjCBool = false
            let folder = root.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else { return nil }
            return Case(name: name, folder: folder)
        }
    }

    /// The folder of golden cases next to the source tree this executable was built in: the
    /// nearest ancestor of `executable` that holds `Fixtures/merge`.
    package static func defaultFixtures(executable: URL) -> URL? {
        var folder = executable.resolvingSymlinksInPath().deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("Fixtures/merge")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), isDirectory.boolValue { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }

    /// What is wrong with one case's result; empty when it passes.
    package func differences(_ testCase: Case) -> [String] {
        let folder = testCase.folder
        guard let caseData = FileManager.default.contents(atPath: folder.appendingPathComponent("case.json").path) else {
            return ["not a case: the folder has no case.json"]
        }
        guard let info = try? JSONParser.parse(caseData), let commandValues = info[JSONPointer(["command"])]?.arrayValue else {
            return ["case.json is not JSON with a command array"]
        }
        let command = commandValues.compactMap(\.stringValue)
        guard command.count == commandValues.count, command.first == "merge" else { return ["case.json: command is not [\"merge\", ARGS...]"] }
        guard let expectedStatus = info[JSONPointer(["exitCode"])]?.numberValue?.int64Value, [0, 1, 2].contains(expectedStatus) else {
            return ["case.json: exitCode is not 0, 1 or 2"]
        }
        let expectedState = FileManager.default.contents(atPath: folder.appendingPathComponent("expected/state.json").path)
        let expectedErrors = FileManager.default.contents(atPath: folder.appendingPathComponent("expected/error.json").path)
        // Device-mode cases compare the whole `--json` document instead (Spec/merge.md 15.7).
        let expectedDevice = FileManager.default.contents(atPath: folder.appendingPathComponent("expected/device.json").path)
        if expectedDevice == nil && expectedStatus == 0 && expectedState == nil { return ["exitCode 0 but no expected/state.json"] }
        if expectedDevice == nil && expectedStatus == 1 && expectedErrors == nil { return ["exitCode 1 but no expected/error.json"] }

        let result: (status: Int32, stdout: Data, stderr: Data)
        do {
            result = try run(Array(command.dropFirst()), in: folder)
        } catch {
            return ["the engine could not be run: \(error)"]
        }
        var problems: [String] = []
        if Int64(result.status) != expectedStatus {
            problems.append("exit status \(result.status), expected \(expectedStatus)")
            let stderr = String(decoding: result.stderr.prefix(600), as: UTF8.self)
            if !stderr.isEmpty { problems.append("stderr: \(stderr)") }
            return problems
        }
        if let expectedDevice, expectedStatus != 2 {
            // With --json, standard error holds warnings only (Spec/merge.md 10, 15.7).
            problems += Self.linesOtherThanWarnings(result.stderr).prefix(3).map { "standard error holds more than warnings: \($0)" }
            return problems + Self.deviceDifferences(expected: expectedDevice, output: result.stdout)
        }
        switch expectedStatus {
        case 0:
            if let expectedState { problems += Self.stateDifferences(expected: expectedState, output: result.stdout) }
        case 1:
            // Device mode writes the state it reaches even when it holds events back (Spec/merge.md 15.6).
            let isDevice = command.contains("--as-store")
            if !result.stdout.isEmpty && !isDevice { problems.append("standard output is not empty (\(result.stdout.count) bytes)") }
            if let expectedErrors { problems += Self.findingDifferences(expected: expectedErrors, stderr: result.stderr) }
        default:
            if !result.stdout.isEmpty { problems.append("standard output is not empty (\(result.stdout.count) bytes)") }
            // A usage error's one message starts with its code when the case names one
            // (Spec/merge.md 9.8, 10).
            if let code = info[JSONPointer(["errorCode"])]?.stringValue {
                let message = Self.linesOtherThanWarnings(result.stderr).first ?? ""
                if !(message.hasPrefix(code + ":") || message.hasPrefix(code + " ")) {
                    problems.append("the message does not start with \(code): \(message.prefix(300))")
                }
            }
        }
        return problems
    }

    /// The lines of standard error that are not warnings (`warning: ...`).
    static func linesOtherThanWarnings(_ stderr: Data) -> [String] {
        String(decoding: stderr, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true).filter { !$0.hasPrefix("warning: ") }.map(String.init)
    }

    /// Runs the engine in `folder` with both pipes drained at once (a full stderr pipe must
    /// not block the engine while stdout is read), stopping it after ``timeout``.
    private func run(_ arguments: [String], in folder: URL) throws -> (status: Int32, stdout: Data, stderr: Data) {
        let process = Process()
        switch engine {
        case .logtool(let executable):
            process.executableURL = executable
            process.arguments = ["merge"] + arguments
        case .shell(let command):
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command + " \"$@\"", "engine"] + arguments
        }
        process.currentDirectoryURL = folder
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stderrBox = DataBox()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { stderrBox.data = err.fileHandleForReading.readDataToEndOfFile() }
        let timer = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: timer)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        timer.cancel()
        return (process.terminationStatus, stdout, stderrBox.data)
    }

    /// Exit 0: standard output must be the expected bytes and one LF (Spec/merge.md 9.8).
    static func stateDifferences(expected: Data, output: Data) -> [String] {
        if output == expected + Data([0x0A]) { return [] }
        guard let want = try? JSONParser.parse(expected) else { return ["expected/state.json is not JSON"] }
        guard let got = try? JSONParser.parse(output) else {
            return ["standard output is not JSON: \(String(decoding: output.prefix(200), as: UTF8.self))"]
        }
        let byPointer = jsonDifferences(want, got, at: .root, limit: 10)
        if !byPointer.isEmpty { return byPointer }
        let common = zip(output, expected).prefix { $0 == $1 }.count
        return ["the state is right but its bytes differ from expected/state.json + LF, first at byte \(common) (not canonical, or no single final LF)"]
    }

    /// Exit 1: the finding lines on standard error, parsed, must be the entries of
    /// expected/error.json, in order.
    static func findingDifferences(expected: Data, stderr: Data) -> [String] {
        guard let document = try? JSONParser.parse(expected), let entries = document[JSONPointer(["errors"])]?.arrayValue else {
            return ["expected/error.json has no errors array"]
        }
        var want: [String] = []
        for entry in entries {
            guard let code = entry[JSONPointer(["code"])]?.stringValue,
                let files = entry[JSONPointer(["files"])]?.arrayValue?.compactMap(\.stringValue)
            else {
                return ["expected/error.json: an entry without code or files"]
            }
            let number = entry[JSONPointer(["number"])]?.numberValue?.int64Value.map(Int.init)
            let details = (entry[JSONPointer(["details"])]?.objectValue ?? JSONObject()).map { ($0.key, FindingLine.text(of: $0.value)) }
            want.append(normalized(code: code, number: number, files: files, details: details))
        }
        var got: [String] = []
        var problems: [String] = []
        let text = String(decoding: stderr, as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) where !line.hasPrefix("warning: ") {
            guard let parsed = FindingLine.parse(String(line)) else {
                problems.append("standard error line does not follow the finding-line grammar (Spec/merge.md 5.9): \(line.prefix(300))")
                continue
            }
            got.append(normalized(code: parsed.code, number: parsed.number, files: parsed.files, details: parsed.details))
        }
        if want != got {
            problems.append("findings differ from expected/error.json")
            problems += want.filter { !got.contains($0) }.map { "missing:    \($0)" }
            problems += got.filter { !want.contains($0) }.map { "unexpected: \($0)" }
            if Set(want) == Set(got) { problems.append("(the same findings, in another order or repeated)") }
        }
        return problems
    }

    /// Device mode: standard output parsed as JSON equals expected/device.json, members named
    /// `message` left out of both (Spec/merge.md 15.7).
    static func deviceDifferences(expected: Data, output: Data) -> [String] {
        guard let want = try? JSONParser.parse(expected) else { return ["expected/device.json is not JSON"] }
        guard let got = try? JSONParser.parse(output) else { return ["standard output is not one JSON document"] }
        func withoutMessages(_ value: JSONValue) -> JSONValue {
            switch value {
            case .object(let members):
                return .object(JSONObject(members.filter { $0.key != "message" }.map { ($0.key, withoutMessages($0.value)) }))
            case .array(let items): return .array(items.map(withoutMessages))
            default: return value
            }
        }
        return jsonDifferences(withoutMessages(want), withoutMessages(got), at: JSONPointer([]), limit: 20)
    }

    /// One finding as a comparable line: fields as JSON strings, so that nothing is ambiguous.
    private static func normalized(code: String, number: Int?, files: [String], details: [(String, String)]) -> String {
        let quote = { (text: String) in JSONWriter().string(.string(text)) }
        return
            "\(code) (\(number.map(String.init) ?? "none")) [\(files.map(quote).joined(separator: ", "))] {\(details.map { "\($0.0)=\(quote($0.1))" }.joined(separator: ", "))}"
    }

    /// Readable differences between two JSON values, by pointer.
    package static func jsonDifferences(_ want: JSONValue, _ got: JSONValue, at pointer: JSONPointer, limit: Int) -> [String] {
        guard want != got else { return [] }
        switch (want, got) {
        case (.object(let a), .object(let b)):
            var result: [String] = []
            for key in Set(a.keys + b.keys).sorted(by: utf8Precedes) where result.count < limit {
                switch (a[key], b[key]) {
                case (let x?, let y?): result += jsonDifferences(x, y, at: pointer / key, limit: limit - result.count)
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

/// Standard error, filled by the thread that drains it.
private final class DataBox: @unchecked Sendable {
    var data = Data()
}
