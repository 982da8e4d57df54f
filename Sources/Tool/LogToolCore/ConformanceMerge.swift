import Foundation
import EnsemblesToolkit

/// A case folder that cannot be run, with the reasons.
struct CaseProblem: Error, Sendable {
    var lines: [String]
}

/// The merge and device-mode cases: what a `case.json` folder runs and how its result is
/// judged (Spec/merge.md 9.8, 15.7).
enum MergeCases {
    /// The plan of the case in `folder`, or why the folder is not a case.
    static func plan(_ folder: URL) -> Result<ConformanceRunner.Plan, CaseProblem> {
        func problem(_ line: String) -> Result<ConformanceRunner.Plan, CaseProblem> { .failure(CaseProblem(lines: [line])) }
        guard let caseData = FileManager.default.contents(atPath: folder.appendingPathComponent("case.json").path) else {
            return problem("not a case: the folder has no case.json")
        }
        guard let info = try? JSONParser.parse(caseData), let commandValues = info[JSONPointer(["command"])]?.arrayValue else {
            return problem("case.json is not JSON with a command array")
        }
        let command = commandValues.compactMap(\.stringValue)
        guard command.count == commandValues.count, command.first == "merge" else { return problem("case.json: command is not [\"merge\", ARGS...]") }
        guard let expectedStatus = info[JSONPointer(["exitCode"])]?.numberValue?.int64Value, [0, 1, 2].contains(expectedStatus) else {
            return problem("case.json: exitCode is not 0, 1 or 2")
        }
        let expectedState = FileManager.default.contents(atPath: folder.appendingPathComponent("expected/state.json").path)
        let expectedErrors = FileManager.default.contents(atPath: folder.appendingPathComponent("expected/error.json").path)
        // Device-mode cases compare the whole `--json` document instead (Spec/merge.md 15.7).
        let expectedDevice = FileManager.default.contents(atPath: folder.appendingPathComponent("expected/device.json").path)
        if expectedDevice == nil && expectedStatus == 0 && expectedState == nil { return problem("exitCode 0 but no expected/state.json") }
        if expectedDevice == nil && expectedStatus == 1 && expectedErrors == nil { return problem("exitCode 1 but no expected/error.json") }
        let errorCode = info[JSONPointer(["errorCode"])]?.stringValue
        let isDevice = command.contains("--as-store")

        var expected: [String]
        if let expectedDevice, expectedStatus != 2 {
            expected = ["standard output is expected/device.json (members named message left out)"]
            if let document = try? JSONParser.parse(expectedDevice), let stop = document[JSONPointer(["device", "stop"])] {
                expected.append("device stop: \(JSONWriter().string(stop))")
            }
        } else {
            switch expectedStatus {
            case 0: expected = ["standard output is expected/state.json and one LF"]
            case 1: expected = ["findings of expected/error.json:"] + ((try? expectedFindings(expectedErrors ?? Data())) ?? []).map { "  " + $0 }
            default: expected = ["a usage error" + (errorCode.map { ", its message starting with \($0)" } ?? "") + ", nothing on standard output"]
            }
        }
        let plan = ConformanceRunner.Plan(
            command: "merge", arguments: Array(command.dropFirst()), rule: info[JSONPointer(["rule"])]?.stringValue,
            expectedStatus: Int32(expectedStatus), expected: expected
        ) { outcome in
            var problems: [String] = []
            if let expectedDevice, expectedStatus != 2 {
                // With --json, standard error holds warnings only (Spec/merge.md 10, 15.7).
                problems += ConformanceRunner.linesOtherThanWarnings(outcome.stderr).prefix(3).map { "standard error holds more than warnings: \($0)" }
                return problems + deviceDifferences(expected: expectedDevice, output: outcome.stdout)
            }
            switch expectedStatus {
            case 0:
                if let expectedState { problems += stateDifferences(expected: expectedState, output: outcome.stdout) }
            case 1:
                // Device mode writes the state it reaches even when it holds events back (Spec/merge.md 15.6).
                if !outcome.stdout.isEmpty && !isDevice { problems.append("standard output is not empty (\(outcome.stdout.count) bytes)") }
                if let expectedErrors { problems += findingDifferences(expected: expectedErrors, stderr: outcome.stderr) }
            default:
                if !outcome.stdout.isEmpty { problems.append("standard output is not empty (\(outcome.stdout.count) bytes)") }
                // A usage error's one message starts with its code when the case names one
                // (Spec/merge.md 9.8, 10).
                if let errorCode {
                    let message = ConformanceRunner.linesOtherThanWarnings(outcome.stderr).first ?? ""
                    if !(message.hasPrefix(errorCode + ":") || message.hasPrefix(errorCode + " ")) {
                        problems.append("the message does not start with \(errorCode): \(message.prefix(300))")
                    }
                }
            }
            return problems
        }
        return .success(plan)
    }

    /// Exit 0: standard output must be the expected bytes and one LF (Spec/merge.md 9.8).
    static func stateDifferences(expected: Data, output: Data) -> [String] {
        if output == expected + Data([0x0A]) { return [] }
        guard let want = try? JSONParser.parse(expected) else { return ["expected/state.json is not JSON"] }
        guard let got = try? JSONParser.parse(output) else {
            return ["standard output is not JSON: \(String(decoding: output.prefix(200), as: UTF8.self))"]
        }
        let byPointer = ConformanceRunner.jsonDifferences(want, got, at: .root, limit: 10)
        if !byPointer.isEmpty { return byPointer }
        let common = zip(output, expected).prefix { $0 == $1 }.count
        return ["the state is right but its bytes differ from expected/state.json + LF, first at byte \(common) (not canonical, or no single final LF)"]
    }

    /// The findings of an `expected/error.json`, one comparable line each.
    static func expectedFindings(_ expected: Data) throws(CaseProblem) -> [String] {
        guard let document = try? JSONParser.parse(expected), let entries = document[JSONPointer(["errors"])]?.arrayValue else {
            throw CaseProblem(lines: ["expected/error.json has no errors array"])
        }
        var want: [String] = []
        for entry in entries {
            guard let code = entry[JSONPointer(["code"])]?.stringValue,
                let files = entry[JSONPointer(["files"])]?.arrayValue?.compactMap(\.stringValue)
            else {
                throw CaseProblem(lines: ["expected/error.json: an entry without code or files"])
            }
            let number = entry[JSONPointer(["number"])]?.numberValue?.int64Value.map(Int.init)
            let details = (entry[JSONPointer(["details"])]?.objectValue ?? JSONObject()).map { ($0.key, FindingLine.text(of: $0.value)) }
            want.append(normalized(code: code, number: number, files: files, details: details))
        }
        return want
    }

    /// Exit 1: the finding lines on standard error, parsed, must be the entries of
    /// expected/error.json, in order.
    static func findingDifferences(expected: Data, stderr: Data) -> [String] {
        let want: [String]
        do {
            want = try expectedFindings(expected)
        } catch {
            return error.lines
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
        // By bytes: a file or store named in NFD where the case names it in NFC is another finding.
        if !exactlyEqual(want, got) {
            problems.append("findings differ from expected/error.json")
            let wanted = Set(want.map(ExactString.init)), found = Set(got.map(ExactString.init))
            problems += want.filter { !found.contains(ExactString($0)) }.map { "missing:    \($0)" }
            problems += got.filter { !wanted.contains(ExactString($0)) }.map { "unexpected: \($0)" }
            if wanted == found { problems.append("(the same findings, in another order or repeated)") }
        }
        return problems
    }

    /// Device mode: standard output parsed as JSON equals expected/device.json, members named
    /// `message` left out of both (Spec/merge.md 15.7).
    static func deviceDifferences(expected: Data, output: Data) -> [String] {
        guard let want = try? JSONParser.parse(expected) else { return ["expected/device.json is not JSON"] }
        guard let got = try? JSONParser.parse(output) else { return ["standard output is not one JSON document"] }
        return ConformanceRunner.jsonDifferences(withoutMembers(["message"], want), withoutMembers(["message"], got), at: JSONPointer([]), limit: 20)
    }

    /// `value` with every object member named in `names` left out, at any depth.
    static func withoutMembers(_ names: Set<String>, _ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            return .object(JSONObject(members.filter { !names.contains($0.key) }.map { ($0.key, withoutMembers(names, $0.value)) }))
        case .array(let items): return .array(items.map { withoutMembers(names, $0) })
        default: return value
        }
    }

    /// One finding as a comparable line: fields as JSON strings, so that nothing is ambiguous.
    private static func normalized(code: String, number: Int?, files: [String], details: [(String, String)]) -> String {
        let quote = { (text: String) in JSONWriter().string(.string(text)) }
        return
            "\(code) (\(number.map(String.init) ?? "none")) [\(files.map(quote).joined(separator: ", "))] {\(details.map { "\($0.0)=\(quote($0.1))" }.joined(separator: ", "))}"
    }
}
