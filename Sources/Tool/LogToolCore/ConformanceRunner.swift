import Foundation
import EnsemblesToolkit

/// Runs the cases of a conformance suite against an engine and says, per case, what differs
/// (Spec/merge.md 9.8, 9.9). `logtool conformance` and the test suite both use it.
package struct ConformanceRunner: Sendable {
    /// The program under test.
    package enum Engine: Sendable {
        /// An executable that takes a `logtool` command line (this `logtool`).
        case logtool(URL)
        /// A shell command that takes the same arguments, run as
        /// `/bin/sh -c 'COMMAND "$@"' engine ARGS...`.
        case shell(String)
        /// A function in this process that runs `COMMAND ARGS...` as `logtool` would in the case
        /// folder, and gives its exit status, standard output and standard error: the tests' way
        /// to run every case without starting a process per case. No timeout applies.
        case function(@Sendable (_ command: String, _ arguments: [String], _ folder: URL) -> (status: Int32, stdout: Data, stderr: Data))

        /// `command` made ready to run from any folder (Spec/merge.md 9.8): its first word, when
        /// it holds a `/`, and every later plain word that names an existing file or folder
        /// relative to `directory` become absolute paths; a first word without `/` is looked
        /// up on `PATH` as the shell would. Throws when the program cannot be started: missing,
        /// or not an executable file.
        package static func resolve(_ command: String, from directory: URL) throws(EngineUnavailable) -> Engine {
            let words = command.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard !words.isEmpty else { throw EngineUnavailable(message: "--engine is empty") }
            var resolved: [String] = []
            for (index, word) in words.enumerated() {
                guard word.allSatisfy(isPlainPathCharacter) else {
                    resolved.append(word)
                    continue
                }
                let absolute = word.hasPrefix("/") ? word : directory.appendingPathComponent(word).standardizedFileURL.path
                if index == 0 {
                    if word.contains("/") {
                        try checkExecutable(absolute, as: word)
                        resolved.append(shellQuoted(absolute))
                    } else if !shellWords.contains(word) {
                        guard searchPath(word) != nil else {
                            throw EngineUnavailable(message: "the engine \(word) cannot be started: not found on PATH")
                        }
                        resolved.append(word)
                    }
                } else if !word.hasPrefix("-") && !word.hasPrefix("/") && FileManager.default.fileExists(atPath: absolute) {
                    resolved.append(shellQuoted(absolute))
                } else {
                    resolved.append(word)
                }
            }
            // A quoted or computed first word only the shell can read: exit status 126 or 127
            // at a case ends the run instead (report(_:)).
            return .shell(resolved.joined(separator: " "))
        }

        /// First words the shell runs itself, never from `PATH`.
        private static let shellWords: Set<String> = ["exec", "cd", "eval", "command", "export", "set", "if", "for", "while", "case", "test", "[", ":", "."]

        private static func checkExecutable(_ path: String, as given: String) throws(EngineUnavailable) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw EngineUnavailable(message: "the engine \(given) cannot be started: no such file (\(path))")
            }
            guard !isDirectory.boolValue, FileManager.default.isExecutableFile(atPath: path) else {
                throw EngineUnavailable(message: "the engine \(given) cannot be started: not an executable file (\(path))")
            }
        }

        private static func searchPath(_ name: String) -> String? {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            for folder in path.split(separator: ":", omittingEmptySubsequences: false) {
                let candidate = (folder.isEmpty ? "." : String(folder)) + "/" + name
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                    FileManager.default.isExecutableFile(atPath: candidate)
                {
                    return candidate
                }
            }
            return nil
        }

        private static func isPlainPathCharacter(_ character: Character) -> Bool {
            character.isLetter || character.isNumber || "_-./+,@%:=".contains(character)
        }

        /// The command line that runs `arguments` of `command` with this engine, as a shell
        /// would read it.
        package func commandLine(_ command: String, _ arguments: [String]) -> String {
            switch self {
            case .logtool(let executable): return ([executable.path, command] + arguments).map(shellQuoted).joined(separator: " ")
            case .shell(let command): return ([command] + arguments.map(shellQuoted)).joined(separator: " ")
            case .function: return (["logtool", command] + arguments).map(shellQuoted).joined(separator: " ")
            }
        }
    }

    /// The engine could not be started; the run stops at once (Spec/merge.md 9.8).
    package struct EngineUnavailable: Error, Sendable, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }

    /// One case of a suite.
    package struct Case: Sendable, CustomStringConvertible {
        package var name: String
        /// The working directory of the engine.
        package var folder: URL
        /// What to run and how to judge it; nil for a merge case folder, whose `case.json`
        /// says (Spec/merge.md 9.8).
        package var plan: Plan?
        /// Why the case cannot run (its description in the kit is broken); it fails with these.
        package var problem: [String]?
        package var description: String { name }

        package init(name: String, folder: URL, plan: Plan? = nil, problem: [String]? = nil) {
            self.name = name
            self.folder = folder
            self.plan = plan
            self.problem = problem
        }
    }

    /// What one case runs and what passes.
    package struct Plan: Sendable {
        /// The `logtool` command whose arguments the engine takes (`merge`, `verify`, `kit`):
        /// this `logtool` runs `COMMAND ARGS...`, another engine gets ARGS only.
        package var command: String
        /// The engine's arguments; ``ConformanceRunner/scratchArgument`` stands for a path
        /// that does not exist yet, in a new folder of its own.
        package var arguments: [String]
        /// The Spec rule the case pins.
        package var rule: String?
        package var expectedStatus: Int32
        /// What a passing run gives, as lines for a person (shown when the status differs).
        package var expected: [String]
        /// The differences once the status is right.
        package var check: @Sendable (Outcome) -> [String]
    }

    /// What the engine did.
    package struct Outcome: Sendable {
        package var status: Int32
        package var stdout: Data
        package var stderr: Data
        /// The path that stood for ``ConformanceRunner/scratchArgument``.
        package var scratch: URL?
    }

    /// The verdict's material for one case.
    package struct Report: Sendable {
        /// The command that ran, as one shell line (nil when nothing ran).
        package var command: String?
        package var rule: String?
        /// Empty when the case passes.
        package var differences: [String]
    }

    /// The argument a plan uses for a path the engine creates.
    package static let scratchArgument = "\u{1}scratch"

    package var engine: Engine
    /// A case whose engine runs longer than this is stopped and fails.
    package var timeout: TimeInterval = 300

    package init(engine: Engine, timeout: TimeInterval = 300) {
        self.engine = engine
        self.timeout = timeout
    }

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

    /// What is wrong with one case's result; empty when it passes. An engine that cannot be
    /// started is one difference.
    package func differences(_ testCase: Case) -> [String] {
        do {
            return try report(testCase).differences
        } catch {
            return [error.message]
        }
    }

    /// Runs one case. Throws when the engine cannot be started, which ends a run.
    package func report(_ testCase: Case) throws(EngineUnavailable) -> Report {
        let plan: Plan
        if let problem = testCase.problem {
            return Report(command: nil, rule: nil, differences: problem)
        } else if let given = testCase.plan {
            plan = given
        } else {
            switch MergeCases.plan(testCase.folder) {
            case .success(let made): plan = made
            case .failure(let problem): return Report(command: nil, rule: nil, differences: problem.lines)
            }
        }
        var scratchFolder: URL?
        var arguments = plan.arguments
        if arguments.contains(Self.scratchArgument) {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("logtool-conformance-\(UUID().uuidString)")
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            } catch {
                return Report(command: nil, rule: plan.rule, differences: ["the runner could not make a scratch folder: \(error.localizedDescription)"])
            }
            scratchFolder = folder
            arguments = arguments.map { $0 == Self.scratchArgument ? folder.appendingPathComponent("out").path : $0 }
        }
        defer { if let scratchFolder { try? FileManager.default.removeItem(at: scratchFolder) } }
        let command = "cd \(shellQuoted(testCase.folder.path)) && \(engine.commandLine(plan.command, arguments))"
        let result: (status: Int32, stdout: Data, stderr: Data, timedOut: Bool)
        do {
            result = try run(plan.command, arguments, in: testCase.folder)
        } catch {
            throw EngineUnavailable(message: "the engine cannot be started: \(error.localizedDescription)")
        }
        // 126 and 127 are the shell's "cannot execute" and "not found" (POSIX), never a
        // status of the contract: the engine did not start.
        if case .shell = engine, result.status == 126 || result.status == 127, plan.expectedStatus != result.status {
            let said = String(decoding: result.stderr.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw EngineUnavailable(message: "the engine cannot be started (exit status \(result.status)): \(said)")
        }
        let outcome = Outcome(status: result.status, stdout: result.stdout, stderr: result.stderr, scratch: scratchFolder?.appendingPathComponent("out"))
        var differences: [String] = []
        if result.timedOut {
            differences.append("stopped: still running after \(Self.seconds(timeout)) s (--timeout)")
        } else if result.status != plan.expectedStatus {
            differences.append("exit status \(result.status), expected \(plan.expectedStatus)")
            differences += plan.expected.map { "expected: " + $0 }
            differences += Self.excerpt(of: result.stdout, named: "standard output") + Self.excerpt(of: result.stderr, named: "standard error")
        } else {
            differences = plan.check(outcome)
        }
        return Report(command: command, rule: plan.rule, differences: differences)
    }

    private static func seconds(_ interval: TimeInterval) -> String {
        interval == interval.rounded() && interval < 1e15 ? String(Int64(interval)) : String(interval)
    }

    /// The first lines of an output, for a failure report.
    static func excerpt(of data: Data, named name: String) -> [String] {
        if data.isEmpty { return ["actual \(name): empty"] }
        var text = String(decoding: data.prefix(600), as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).prefix(6).map { "actual \(name): \($0)" }
        return data.count > 600 ? lines + ["actual \(name): ... (\(data.count) bytes)"] : lines
    }

    /// The lines of standard error that are not warnings (`warning: ...`).
    static func linesOtherThanWarnings(_ stderr: Data) -> [String] {
        String(decoding: stderr, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true).filter { !$0.hasPrefix("warning: ") }.map(String.init)
    }

    /// Runs the engine in `folder` with both pipes drained at once (a full stderr pipe must
    /// not block the engine while stdout is read), stopping it after ``timeout``.
    private func run(_ command: String, _ arguments: [String], in folder: URL) throws -> (status: Int32, stdout: Data, stderr: Data, timedOut: Bool) {
        let process = Process()
        switch engine {
        case .function(let body):
            let result = body(command, arguments, folder)
            return (result.status, result.stdout, result.stderr, false)
        case .logtool(let executable):
            process.executableURL = executable
            process.arguments = [command] + arguments
        case .shell(let shellCommand):
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shellCommand + " \"$@\"", "engine"] + arguments
        }
        process.currentDirectoryURL = folder
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stdoutBox = DataBox(), stderrBox = DataBox(), stopped = DataBox()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { stdoutBox.data = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { stderrBox.data = err.fileHandleForReading.readDataToEndOfFile() }
        let pid = process.processIdentifier
        let timer = DispatchWorkItem {
            guard process.isRunning else { return }
            stopped.data = Data([1])
            // The engine's own children (a shell's commands) hold the pipes too: stop its
            // process group when it leads one.
            if getpgid(pid) == pid { kill(-pid, SIGKILL) } else { kill(pid, SIGKILL) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: timer)
        process.waitUntilExit()
        timer.cancel()
        // A child that outlives a stopped engine may keep a pipe open: do not wait for it long.
        let drained = group.wait(timeout: .now() + (stopped.data.isEmpty ? timeout : 5))
        let timedOut = !stopped.data.isEmpty
        if drained == .timedOut && !timedOut {
            return (process.terminationStatus, Data(), Data(), true)
        }
        return (process.terminationStatus, drained == .success ? stdoutBox.data : Data(), drained == .success ? stderrBox.data : Data(), timedOut)
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
        case (.array(let a), .array(let b)) where a.count == b.count:
            var result: [String] = []
            for (index, (x, y)) in zip(a, b).enumerated() where result.count < limit {
                result += jsonDifferences(x, y, at: pointer / index, limit: limit - result.count)
            }
            return result
        default:
            return ["at \(pointer.displayString): expected \(JSONWriter().string(want)), got \(JSONWriter().string(got))"]
        }
    }
}

/// `text` as one shell word: as it is when it holds only characters no shell treats
/// specially, otherwise in single quotes.
package func shellQuoted(_ text: String) -> String {
    if !text.isEmpty && text.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "_-./+,@%:=".unicodeScalars.contains($0)) })
    {
        return text
    }
    return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// Data filled by the thread that drains a pipe.
private final class DataBox: @unchecked Sendable {
    var data = Data()
}
