import ArgumentParser
import Foundation
import EnsemblesToolkit
import TemporaryFiles
import ProgressReporting

/// Exit statuses every `logtool` command uses (Spec/inspect.md).
package enum ExitStatus: Int32, Sendable {
    /// Everything was read (and, for checks, found valid).
    case success = 0
    /// Some file could not be read or was invalid; the rest of the output still stands.
    case problemsFound = 1
    /// The command line was wrong, or the path is missing or is not a cloud folder or event file.
    case usage = 2
}

/// The `logtool` command: look inside Ensembles cloud folders and event files.
package struct LogTool: ParsableCommand {
    /// The toolkit's version, the Spec it implements and the conformance kit it passes.
    package static let version = "logtool 0.14.4 (Spec 0.14.4, conformance kit 1.8.0)"

    /// Every command names itself: a name left out is derived from the type's description at
    /// every start, a scan of the runtime's conformance tables per command (20 M instructions,
    /// Benchmarks/README.md).
    package static let configuration = CommandConfiguration(
        commandName: "logtool",
        abstract: "Inspect and validate Ensembles cloud folders and event files.",
        discussion: """
            Every command takes -q/--quiet and --progress/--no-progress. Shell completion: \
            `logtool --generate-completion-script bash|zsh|fish` prints the script to install \
            (README, "Completion, manual and API documentation"). The manual page: \
            `swift package plugin generate-manual` in the source tree.
            """,
        version: version,
        subcommands: [
            Inspect.self, Verify.self, Diff.self, History.self, Timeline.self, Convert.self, Merge.self, Rebase.self, Repair.self, Generate.self, Fetch.self,
            Conformance.self,
            Validate.self, Kit.self,
        ]
    )

    package init() {}

    /// Runs the command line and returns the exit status; usage errors exit with 2, not the
    /// argument parser's 64, as the Spec promises. A failed write to standard output makes the
    /// status 1, with a message; a reader that closed it does not (Spec/README.md 5.4).
    package static func run(arguments: [String]) -> Int32 {
        run(arguments: arguments, drawsProgress: false)
    }

    /// ``run(arguments:)``; with `drawsProgress`, a progress line is drawn on standard error as
    /// the command's `--progress`, `--no-progress` and `--quiet` and the terminal decide.
    static func run(arguments: [String], drawsProgress: Bool) -> Int32 {
        // A closed pipe is EPIPE from write(2), not a signal that ends the process.
        signal(SIGPIPE, SIG_IGN)
        var status: Int32
        // 1 is "different" for diff, so its failed write is 2 (Spec/diff.md 7).
        var writeFailure = ExitStatus.problemsFound
        do {
            var command = try parseAsRoot(arguments)
            if command is Diff { writeFailure = .usage }
            // Help and version are commands without these options (a parsable type made with
            // init() has no values to read).
            let output = (command as? any HasOutputOptions)?.outputOptions
            if drawsProgress && output?.drawsProgress(onTerminal: isatty(STDERR_FILENO) == 1) ?? (isatty(STDERR_FILENO) == 1) {
                ProgressReport.install(Console.progressLine)
            }
            try Console.$quiet.withValue(output?.quiet ?? false) { try command.run() }
            status = ExitStatus.success.rawValue
        } catch let exit as ToolExit {
            status = exit.status.rawValue
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                writeStandardOutput(fullMessage(for: error) + "\n")
                status = ExitStatus.success.rawValue
            } else {
                writeStandardError(fullMessage(for: error))
                status = ExitStatus.usage.rawValue
            }
        }
        if let failure = Console.outputFailure {
            writeErrors([FormatError(.fileWriteFailed, "standard output: \(failure)", location: .init(file: "-"))])
            if status == ExitStatus.success.rawValue || status == ExitStatus.problemsFound.rawValue { status = writeFailure.rawValue }
        }
        return status
    }

    /// Runs the command line in process and returns its exit status and exactly what it wrote,
    /// the way swift-argument-parser's command tests do; for tests.
    package static func runCapturing(arguments: [String]) -> (status: Int32, stdout: String, stderr: String) {
        let run = runCapturingBytes(arguments: arguments)
        return (run.status, String(decoding: run.stdout, as: UTF8.self), String(decoding: run.stderr, as: UTF8.self))
    }

    /// ``runCapturing(arguments:)`` with the output as the bytes written (a binary file on
    /// standard output stays as it is).
    package static func runCapturingBytes(arguments: [String]) -> (status: Int32, stdout: Data, stderr: Data) {
        let captured = Console.Captured()
        let status = Console.$captured.withValue(captured) { run(arguments: arguments) }
        return (status, captured.stdout, captured.stderr)
    }

    /// What the `logtool` executable runs: a closed pipe is a write error rather than a
    /// SIGPIPE death, and SIGINT, SIGTERM or SIGHUP remove the command's temporary files
    /// before the process exits with 128 + the signal number.
    package static func runAsExecutable(arguments: [String]) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        Console.removeTemporaryFilesOnSignals()
        defer { Console.clearProgressLine() }
        return run(arguments: arguments, drawsProgress: true)
    }
}

/// Standard output and error. Writes never trap: a failure of standard output is remembered,
/// later output is dropped, and ``LogTool/run(arguments:)`` reports it and exits 1.
enum Console {
    private final class State: @unchecked Sendable {
        let lock = NSLock()
        var failure: String?
        /// The reader of standard output closed it; what is left to write is dropped.
        var readerLeft = false
        var signalSources: [DispatchSourceSignal] = []
    }
    private static let state = State()

    static var outputFailure: String? {
        state.lock.lock()
        defer { state.lock.unlock() }
        return state.failure
    }

    /// Standard output and error of a command run in process by ``LogTool/runCapturing(arguments:)``.
    package final class Captured: @unchecked Sendable {
        let lock = NSLock()
        var stdout = Data()
        var stderr = Data()

        func append(_ bytes: Data, toStandardError: Bool) {
            lock.lock()
            defer { lock.unlock() }
            if toStandardError { stderr += bytes } else { stdout += bytes }
        }
    }

    /// Set while a command runs in process for a test: its output goes here, not to the streams.
    @TaskLocal static var captured: Captured?

    /// `--quiet`: warnings are not written.
    @TaskLocal static var quiet = false

    /// The private snapshots of URLs being read and the URL each stands for: where output names
    /// a path inside a snapshot, it names the URL instead (Spec/remote.md 5.1).
    private final class Renames: @unchecked Sendable {
        let lock = NSLock()
        var pairs: [(snapshot: Data, url: Data)] = []
    }
    private static let renames = Renames()

    static func addRename(snapshot: String, url: String) {
        renames.lock.lock()
        renames.pairs.append((Data(snapshot.utf8), Data(url.utf8)))
        renames.lock.unlock()
    }

    /// Forgets the renames of the snapshots inside `folder`.
    static func removeRenames(inside folder: String) {
        renames.lock.lock()
        renames.pairs.removeAll { $0.snapshot.starts(with: Data((folder + "/").utf8)) }
        renames.lock.unlock()
    }

    /// `bytes` with every snapshot path replaced by its URL. A snapshot's path holds a UUID,
    /// so it names nothing else; a URL needs no escaping in text or JSON (Spec/README.md 4.1).
    static func renamed(_ bytes: Data) -> Data {
        renames.lock.lock()
        let pairs = renames.pairs
        renames.lock.unlock()
        guard !pairs.isEmpty else { return bytes }
        var result = bytes
        for (snapshot, url) in pairs {
            var output = Data()
            var rest = result[...]
            while let range = rest.range(of: snapshot) {
                output += rest[..<range.lowerBound]
                output += url
                rest = rest[range.upperBound...]
            }
            output += rest
            result = output
        }
        return result
    }

    static func out(_ bytes: Data) {
        let bytes = renamed(bytes)
        if let captured { return captured.append(bytes, toStandardError: false) }
        // On a terminal both streams share the screen: the progress line goes first.
        clearProgressLine()
        state.lock.lock()
        defer { state.lock.unlock() }
        guard state.failure == nil, !state.readerLeft else { return }
        // write(2) rather than FileHandle, whose error does not say which errno ended it: a
        // reader that closed the pipe (`| head`) is not a failure (Spec/README.md 5.4).
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = write(STDOUT_FILENO, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else if written < 0 && errno == EPIPE {
                    state.readerLeft = true
                    return
                } else {
                    state.failure = "write failed: \(String(cString: strerror(errno)))"
                    return
                }
            }
        }
    }

    static func err(_ bytes: Data) {
        let bytes = renamed(bytes)
        if let captured { return captured.append(bytes, toStandardError: true) }
        clearProgressLine()
        try? FileHandle.standardError.write(contentsOf: bytes)
    }

    private final class Line: @unchecked Sendable {
        let lock = NSLock()
        var shown = false
        var last = Date.distantPast
        var step = ""
        var started = Date()
    }
    private static let line = Line()

    /// Draws ``ProgressLine/render(step:done:total:elapsed:)`` on one line of standard error, at
    /// most ten times a second (installed when it is a terminal, or with `--progress`).
    static let progressLine: ProgressReport.Handler = { step, done, total in
        line.lock.lock()
        defer { line.lock.unlock() }
        let now = Date()
        if step != line.step {
            line.step = step
            line.started = now
        }
        guard now.timeIntervalSince(line.last) >= 0.1 || done >= total else { return }
        line.last = now
        line.shown = true
        let text = ProgressLine.render(step: step, done: done, total: total, elapsed: now.timeIntervalSince(line.started))
        try? FileHandle.standardError.write(contentsOf: Data("\r\u{1B}[K\(text)".utf8))
    }

    /// Removes the progress line, if one is shown, before other output to standard error.
    static func clearProgressLine() {
        line.lock.lock()
        defer { line.lock.unlock() }
        guard line.shown else { return }
        line.shown = false
        try? FileHandle.standardError.write(contentsOf: Data("\r\u{1B}[K".utf8))
    }

    static func removeTemporaryFilesOnSignals() {
        state.lock.lock()
        defer { state.lock.unlock() }
        guard state.signalSources.isEmpty else { return }
        for number in [SIGINT, SIGTERM, SIGHUP] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let removed = TemporaryFiles.removeAll()
                err(Data("logtool: stopped by signal \(number)\(removed.isEmpty ? "" : "; temporary files removed")\n".utf8))
                _exit(128 + number)
            }
            source.resume()
            state.signalSources.append(source)
        }
    }
}

/// Ends a command with a status after its output has been written.
struct ToolExit: Error {
    var status: ExitStatus
}

/// Leaves `value` allocated until the process exits, which returns its memory at once: a command
/// about to end need not free a large state object by object (a tenth of a second for 100k
/// objects, on the main thread, after the output is written).
func keepUntilExit(_ value: some Any) {
    _ = Unmanaged.passRetained(KeptUntilExit(value))
}

private final class KeptUntilExit<Value> {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Writes text for people to standard error, one LF after it. Values in it are written with
/// ``escaped(_:)``; a control character that still reaches here is escaped all the same, all but
/// line feeds and tabs (Spec/README.md 4.1).
func writeStandardError(_ text: String) {
    let safe = TerminalText.escapeControls(text, keepingLineBreaks: true)
    Console.err(Data((safe.hasSuffix("\n") ? safe : safe + "\n").utf8))
}

/// Writes a warning (`warning: ` and the escaped text) unless the command runs with `--quiet`.
func writeWarning(_ warning: Any) {
    guard !Console.quiet else { return }
    writeStandardError("warning: \(escaped(warning))")
}

/// Writes text for people to standard output, guarded like ``writeStandardError(_:)``.
func writeStandardOutput(_ text: String) {
    Console.out(Data(TerminalText.escapeControls(text, keepingLineBreaks: true).utf8))
}

/// Writes a file's content (not text for people) to standard output as it is.
func writeStandardOutput(bytes: Data) {
    Console.out(bytes)
}

/// A name or other value from the input as text output shows it (Spec/README.md 4.1): no
/// control character, no line break, backslashes doubled.
func escaped(_ value: Any) -> String {
    TerminalText.escape(String(describing: value))
}

/// Writes an operation's problems and gives the exit status that goes with them.
func reportAndExit(_ error: EnsembleError, json: Bool = false) -> ToolExit {
    writeProblems(error.problems, json: json)
    return ToolExit(status: error.kind == .usage ? .usage : .problemsFound)
}

/// Writes errors in the one shape every command uses (Spec/README.md 5.4).
func writeErrors(_ errors: [FormatError], json: Bool = false) {
    writeProblems(errors.map(IntegrityProblem.init(readError:)), json: json)
}

/// One finding line each on standard error (Spec/merge.md 5.9), or with `json` one
/// `{"errors":[...]}` document on standard output (merge.md 10).
func writeProblems(_ problems: [IntegrityProblem], json: Bool) {
    if json {
        writeJSON(
            .object(
                JSONObject([
                    (
                        "errors",
                        .array(
                            problems.map { problem in
                                .object(
                                    JSONObject([
                                        ("code", .string(problem.code.rawValue)),
                                        ("details", .object(problem.details)),
                                        ("files", .array(problem.files.map(JSONValue.string))),
                                        ("message", .string(problem.message)),
                                        ("number", problem.number.map { JSONValue(Int64($0)) } ?? .null),
                                    ]))
                            })
                    )
                ])))
    } else {
        for problem in problems { writeStandardError(FindingLine.render(problem)) }
    }
}

/// The one rule for a path a command creates: its parent must exist, and it must not exist
/// unless `force` (`--force`); otherwise a usage error (exit 2) that says which.
func checkDestination(_ path: String, force: Bool, existsCode: FormatError.Code, json: Bool = false) throws {
    do {
        try Converter.checkDestination(path, replacing: force, existsCode: existsCode)
    } catch {
        writeErrors(error.errors.map { FormatError($0.code, $0.message, location: .init(file: path)) }, json: json)
        throw ToolExit(status: .usage)
    }
}

/// Prints a JSON document for scripts: canonical (compact, sorted keys), then one LF.
func writeJSON(_ value: JSONValue) {
    // JSON escapes every C0 control itself (Spec/v2-json.md 6.3); a document is never rewritten.
    Console.out(Data((JSONWriter().string(value) + "\n").utf8))
}

/// The encoding of written v2 events: `json` (Spec/v2-json.md) or `binary` (Spec/v2-binary.md).
enum EventEncodingOption: String, CaseIterable, ExpressibleByArgument {
    case json, binary
}

extension TargetDialect: ExpressibleByArgument {}
extension BundledSchema: ExpressibleByArgument {}

/// Options every command that reads events shares: the data model and the 1.x leniency.
struct ReadingOptions: ParsableArguments {
    @Option(
        name: .long,
        help:
            "The app's data model: an .xcdatamodeld bundle, an .xcdatamodel folder or a contents file (needed for v1 files; v2 events are checked against it), or a compiled .momd (or .mom beside its VersionInfo.plist), which gives only its versions' entity hashes.",
        completion: .file())
    var model: String?

    @Option(name: .long, help: "The model version to use (default: the bundle's current version).")
    var modelVersion: String?

    @Flag(name: .long, help: "Accept the trailing commas of the original 1.x logs (v1 files only).")
    var lenient = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A file holding the password of an encrypted folder (one final newline is ignored).",
            discussion:
                "Without it: the environment variable LOGTOOL_PASSWORD, else a prompt when standard input is a terminal, which asks again after a wrong password (three tries). A wrong password is one error, exit 2. Never give a password as an argument."
        ),
        completion: .file())
    var passwordFile: String?

    /// `--model-version` chooses a version of `--model`; alone it is a usage error (Spec/merge.md 2).
    func validateModelVersion() throws {
        if modelVersion != nil && model == nil { throw ValidationError("--model-version needs --model") }
    }

    /// The options of an ``Ensemble`` operation; `versions` adds the model versions of Core Data
    /// stores to those of a compiled `--model` (Spec/merge.md 5.7). A model or store that cannot
    /// be read ends the command (exit 2), its error written as `json` says.
    func ensembleOptions(_ versions: ModelVersionOptions? = nil, json: Bool = false) throws -> Ensemble.Options {
        var options = Ensemble.Options(model: try loadedModel(json: json), lenient: lenient)
        if let model, CompiledModel.looksLikeCompiledModel(model) {
            do {
                try options.addModelVersions(fromCompiledModel: model, version: modelVersion)
            } catch {
                writeErrors([error], json: json)
                throw ToolExit(status: .usage)
            }
        }
        for path in versions?.storeMetadata ?? [] {
            do {
                try options.addModelVersion(fromCoreDataStore: path)
            } catch {
                writeErrors([error], json: json)
                throw ToolExit(status: .usage)
            }
        }
        options.password = try PasswordOption.source(file: passwordFile)
        return options
    }

    /// The model `--model` names; nil for a compiled model, whose entities cannot be read here.
    func loadedModel(json: Bool = false) throws -> DataModel? {
        guard let model, !CompiledModel.looksLikeCompiledModel(model) else { return nil }
        do {
            return try ModelBundle(path: model).load(version: modelVersion)
        } catch {
            writeErrors([error], json: json)
            throw ToolExit(status: .usage)
        }
    }
}

/// Where else the app's model versions come from: its Core Data stores (Spec/merge.md 5.7).
struct ModelVersionOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "An app's Core Data SQLite store: the model version that wrote it (its entity hashes) is one the app knows (repeatable).",
            valueName: "store"),
        completion: .file())
    var storeMetadata: [String] = []
}

struct Inspect: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show what a cloud folder or an event file holds.",
        discussion: """
            PATH is an ensemble folder, a folder holding ensembles, one event file (v2, or v1 with \
            --model), a data model (.xcdatamodeld, .xcdatamodel or contents), or an app's Core Data \
            SQLite store (its metadata, entity hashes and tables). The folder is only read: nothing \
            is written and symbolic links are not followed.
            Exit status: 0 everything was read, 1 some file could not be read (the rest is still \
            shown), 2 usage error or PATH is neither a cloud folder nor a file.

            Examples:
              logtool inspect cloud/MainStore
              logtool inspect --json cloud > report.json
              logtool inspect --lenient --model Model.xcdatamodeld log.json
              logtool inspect Model.xcdatamodeld
              logtool inspect --json App.sqlite
              logtool inspect --sqlite meta.db cloud
              logtool inspect eventdata/MainStore --cloud cloud --backend-identity alice

            A device's event-data folder (Ensembles 1.x: the ensemble folder holding \
            events.sqlite and store.plist, or the event-data folder holding one ensemble) is \
            reported as Spec/device-state.md 5 says: --cloud compares it with its cloud folder, \
            --backend-identity gives the backend's current identity token (condition 202).
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @OptionGroup(title: "Remote Folder Options") var remote: RemoteOptions

    @Argument(
        help: "A cloud folder, an ensemble folder, an event file, a data model or a Core Data store, or a remote folder's URL (Spec/remote.md).",
        completion: .file())
    var path: String

    @Flag(name: .long, help: "Print the report as JSON (Spec/inspect.md).")
    var json = false

    @Option(
        name: .long, help: ArgumentHelp("Write a cloud folder's metadata as SQLite tables to FILE instead (Spec/inspect.md 6).", valueName: "FILE"),
        completion: .file())
    var sqlite: String?

    @Flag(name: .long, help: "With --sqlite: replace FILE if it exists (only once the new one is complete).")
    var force = false

    @OptionGroup var options: ReadingOptions

    @Option(name: .long, help: "For a device folder: the cloud folder (or its ensemble folder) to compare it with.", completion: .directory)
    var cloud: String?

    @OptionGroup var identity: BackendIdentityOption

    @Option(
        name: .customLong("as-client"),
        help: ArgumentHelp("For a TICoreDataSync folder: the sets client ID applies next, in the framework's order (Spec/ticds.md 7.1).", valueName: "ID"))
    var asClient: String?

    @OptionGroup var ticdsDates: TICDSDatesOption

    func validate() throws {
        if force && sqlite == nil { throw ValidationError("--force applies only to --sqlite") }
        if json && sqlite != nil { throw ValidationError("--json and --sqlite are two outputs; give one") }
        if sqlite != nil && (cloud != nil || identity.backendIdentity != nil) {
            throw ValidationError("--sqlite reads a cloud folder; --cloud and --backend-identity are for a device folder")
        }
    }

    func run() throws {
        if let sqlite { try checkDestination(sqlite, force: force, existsCode: .sqliteDestinationExists) }
        // A URL is read from a private snapshot (Spec/remote.md 5.1).
        let (paths, temporary) = try RemoteInputs.localize([self.path], remote, json: json)
        defer { RemoteInputs.remove(temporary) }
        let path = paths[0]
        if let sqlite {
            let ensemble = Ensemble(inputs: [path], options: try options.ensembleOptions(json: false))
            do {
                try ensemble.exportMetadata(toSQLite: sqlite, replacing: force)
            } catch {
                throw reportAndExit(error)
            }
            return
        }
        if cloud == nil && identity.backendIdentity == nil && Ensemble.looksLikeTICDSFolder(path) {
            // TICoreDataSync's remote folder (Spec/ticds.md 7).
            let ensemble = Ensemble(inputs: [path], options: try options.ensembleOptions(json: json))
            let report: JSONValue
            do {
                report = try ensemble.inspectTICDS(asClient: asClient, datesFile: ticdsDates.dates)
            } catch {
                throw reportAndExit(error, json: json)
            }
            if json { writeJSON(report) } else { writeStandardOutput(TICDSText.render(report, asClient: asClient)) }
            if report[JSONPointer(["errors"])]?.arrayValue?.isEmpty == false { throw ToolExit(status: .problemsFound) }
            return
        }
        if asClient != nil || ticdsDates.dates != nil {
            writeErrors(
                [FormatError(.ticdsNotTICDSFolder, "--as-client and --dates apply to a TICoreDataSync folder", location: .init(file: path))], json: json)
            throw ToolExit(status: .usage)
        }
        if cloud != nil || identity.backendIdentity != nil || Ensemble.looksLikeDeviceFolder(path) {
            let report: JSONValue
            do {
                report = try Ensemble.inspectDevice(at: path, cloud: cloud, backendIdentity: identity.backendIdentity)
            } catch {
                throw reportAndExit(error, json: json)
            }
            if json { writeJSON(report) } else { writeStandardOutput(DeviceStateText.render(report)) }
            return
        }
        // A model is described without the folder options (its own --model-version only).
        let isModel = ModelBundle.looksLikeModel(path)
        if isModel && !FileManager.default.fileExists(atPath: path) {
            writeErrors([FormatError(.folderNotFound, "no such file or folder", location: .init(file: path))], json: json)
            throw ToolExit(status: .usage)
        }
        let ensemble = Ensemble(inputs: [path], options: isModel ? Ensemble.Options() : try options.ensembleOptions(json: json))
        let report: JSONValue
        do {
            report = try ensemble.inspect(modelVersion: options.modelVersion)
        } catch {
            throw reportAndExit(error, json: json)
        }
        let kind = report[JSONPointer(["kind"])]?.stringValue
        if json {
            writeJSON(report)
        } else {
            writeStandardOutput(kind == "model" ? ModelReport.text(report) : kind == "coreDataStore" ? StoreReport.text(report) : InspectText.render(report))
        }
        if kind == "model" || kind == "coreDataStore" {
            if report[JSONPointer(["errors"])]?.arrayValue?.isEmpty == false { throw ToolExit(status: .problemsFound) }
            return
        }
        let unreadable =
            report[JSONPointer(["summary", "unreadable"])]?.numberValue?.int64Value
            ?? Int64(report[JSONPointer(["unreadable"])]?.arrayValue?.count ?? 0)
        if unreadable > 0 { throw ToolExit(status: .problemsFound) }
    }
}

struct Convert: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert event files and cloud folders between the v1 and v2 JSON dialects.",
        discussion: """
            SOURCE is an event file, a v1 log or a cloud folder; DESTINATION must not exist. Everything \
            is written under a hidden temporary name beside DESTINATION, read back and compared with \
            the source, then renamed into place: a crash never leaves a partial DESTINATION and the \
            source is never modified. Exit status: 0 converted, 1 a source file could not be read or \
            the conversion would lose information (nothing written), 2 usage error.

            Examples:
              logtool convert cloud converted
              logtool convert --to v1 --model Model.xcdatamodeld cloud converted-v1
              logtool convert --encoding binary --blob-container cloud compact
              logtool convert --zip --encrypt --password-file pw.txt cloud wrapped
              logtool convert eventdata/MainStore device-cloud

            A device's event-data folder (see inspect) becomes the new cloud folder \
            DESTINATION/<ensemble> in v2 JSON: its complete events, its store's registration and \
            its data files (Spec/device-state.md 7).
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @OptionGroup var options: ReadingOptions

    @Option(name: .long, help: "The dialect to write.")
    var to: TargetDialect = .v2

    @Option(name: .long, help: "The encoding of v2 events (Spec/v2-binary.md for binary).")
    var encoding: EventEncodingOption = .json

    @Flag(name: .long, help: "Replace DESTINATION if it exists (only once the new one is complete and verified).")
    var force = false

    @Flag(name: .long, help: "Write every data file in the checksummed blob container (Spec/data-blobs.md).")
    var blobContainer = false

    @Flag(name: .long, help: "Put every written file in a zip archive of one entry, as Ensembles 2's zip file system does (Spec/wrappers.md 4.3).")
    var zip = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Encrypt every written file (RNCryptor v3 with a password, as Ensembles 2's encrypted file system does; Spec/wrappers.md 3.3).",
            discussion:
                "The password comes from --password-file, LOGTOOL_PASSWORD, or a prompt asked twice on a terminal, never from an argument; it also reads an encrypted SOURCE. With --zip, files are zipped first, then encrypted."
        ))
    var encrypt = false

    @Flag(name: .long, help: "Print the summary as JSON.")
    var json = false

    @Argument(help: "An event file, a v1 log, a cloud folder or a device's event-data folder.", completion: .file())
    var source: String

    @Argument(help: "The path to create.", completion: .file())
    var destination: String

    func validate() throws {
        try options.validateModelVersion()
        guard encoding == .json || to == .v2 else { throw ValidationError("--encoding binary writes v2 events; it cannot be used with --to v1") }
        guard !(json && destination == "-") else { throw ValidationError("--json and DESTINATION - would both write to standard output") }
        if Ensemble.looksLikeDeviceFolder(source) {
            guard to == .v2, encoding == .json, !zip, !encrypt, !blobContainer, !force, destination != "-" else {
                throw ValidationError("a device's event-data folder converts to a new plain v2 JSON cloud folder only (Spec/device-state.md 7)")
            }
        }
    }

    func run() throws {
        guard destination == "-" else { return try convert(to: destination) }
        // Converted into a private folder, then copied out: the converter checks what it wrote
        // by reading it back, which standard output cannot do (Spec/convert.md 1).
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("logtool-convert-\(UUID().uuidString)")
        TemporaryFiles.register(scratch.path)
        defer {
            try? FileManager.default.removeItem(at: scratch)
            TemporaryFiles.unregister(scratch.path)
        }
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let written = scratch.appendingPathComponent(source == "-" ? "standard-input" : URL(fileURLWithPath: source).lastPathComponent)
        try convert(to: written.path, quietly: true)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: written.path, isDirectory: &isFolder), !isFolder.boolValue else {
            writeErrors([
                FormatError(
                    .convertStandardOutput, "converts to a folder (a log or a cloud folder), which cannot go to standard output; give a DESTINATION",
                    location: .init(file: source))
            ])
            throw ToolExit(status: .usage)
        }
        writeStandardOutput(bytes: try Data(contentsOf: written))
    }

    /// Converts SOURCE into `destination`; `quietly`, only errors are printed.
    private func convert(to destination: String, quietly: Bool = false) throws {
        var readingOptions = Ensemble.Options(model: try options.loadedModel(json: json), lenient: options.lenient)
        readingOptions.password = try PasswordOption.source(file: options.passwordFile)
        var wrapping = Wrapping.plain
        if zip || encrypt {
            // One password serves every file of a command (Spec/wrappers.md 5.4): the one that
            // encrypts also reads an encrypted source.
            let password = encrypt ? try PasswordOption.writingPassword(file: options.passwordFile) : nil
            guard let asked = Wrapping(zip: zip, encryptWith: password) else {
                writeErrors([FormatError(.wrapPasswordRequired, "an empty password encrypts nothing; none was written")], json: json)
                throw ToolExit(status: .usage)
            }
            wrapping = asked
            if let password = asked.readingPassword { readingOptions.password = password }
        }
        let format: Ensemble.Format = to == .v1 ? .v1JSON : encoding == .binary ? .v2Binary : .v2JSON
        var summary: ConversionReport?
        var errors: [FormatError] = []
        do throws(EnsembleError) {
            if Ensemble.looksLikeDeviceFolder(source) {
                summary = try Ensemble.convertDevice(at: source, to: destination)
            } else {
                summary = try Ensemble(inputs: [source], options: readingOptions).convert(
                    to: destination, format: format, blobContainers: blobContainer, wrapping: wrapping, replacing: force)
            }
        } catch {
            if error.kind == .usage {
                writeErrors(error.readErrors, json: json)
                throw ToolExit(status: .usage)
            }
            errors = error.readErrors
        }
        let files = summary?.files ?? []
        let skipped = summary?.skipped ?? []
        let notes = summary?.notes ?? []
        let movedToDataFiles = summary?.movedToDataFiles ?? 0
        let events = files.reduce(0) { $0 + $1.events }
        if json {
            let sortedFiles = files.sorted {
                !exactlyEqual($0.source, $1.source) ? utf8Precedes($0.source, $1.source) : utf8Precedes($0.destination, $1.destination)
            }
            writeJSON(
                .object(
                    JSONObject([
                        ("convertVersion", JSONValue(Int64(1))),
                        ("source", .string(source)),
                        ("destination", .string(destination)),
                        ("to", .string(to.rawValue)),
                        (
                            "files",
                            .array(
                                sortedFiles.map { file in
                                    .object(
                                        JSONObject([
                                            ("source", .string(file.source)), ("destination", .string(file.destination)),
                                            ("events", JSONValue(Int64(file.events))),
                                        ]))
                                })
                        ),
                        ("movedToDataFiles", JSONValue(Int64(movedToDataFiles))),
                        (
                            "skipped",
                            .array(
                                skipped.sorted { utf8Precedes($0.path, $1.path) }.map {
                                    .object(JSONObject([("path", .string($0.path)), ("reason", .string($0.reason))]))
                                })
                        ),
                        ("notes", .array(notes.map(JSONValue.string))),
                        (
                            "errors",
                            .array(
                                errors.sorted { a, b in
                                    let fileA = a.location.file ?? "", fileB = b.location.file ?? ""
                                    if !exactlyEqual(fileA, fileB) { return utf8Precedes(fileA, fileB) }
                                    let pointerA = a.location.pointer?.description ?? "", pointerB = b.location.pointer?.description ?? ""
                                    return !exactlyEqual(pointerA, pointerB) ? utf8Precedes(pointerA, pointerB) : a.code < b.code
                                }.map(\.jsonValue))
                        ),
                    ])))
        } else if errors.isEmpty && !quietly {
            let counted = "\(files.count) \(files.count == 1 ? "file" : "files") (\(events) \(events == 1 ? "event" : "events"))"
            var lines = ["Converted \(counted) from \(escaped(source)) to \(escaped(destination)) as \(to)."]
            if movedToDataFiles > 0 { lines.append("Moved \(movedToDataFiles) binary values over 10,000 bytes into data files.") }
            for skipped in skipped { lines.append("Skipped \(escaped(skipped.path)): \(escaped(skipped.reason))") }
            lines += notes.map { "Note: \(escaped($0))" }
            writeStandardOutput(lines.joined(separator: "\n") + "\n")
        }
        if !errors.isEmpty {
            if !json { writeErrors(errors) }
            throw ToolExit(status: .problemsFound)
        }
    }
}

struct Validate: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check JSON files against one of the Spec's schemas.",
        discussion: """
            Reports every schema violation with its JSON pointer. Only the schema is checked; \
            `inspect` also decodes. Exit status: 0 all valid, 1 some file invalid or unparseable, 2 usage error.

            Examples:
              logtool validate --schema v2-event events/*.cdeevent
              logtool validate --schema state --json state.json
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @Option(name: .long, help: "The schema to check against.")
    var schema: BundledSchema = .v2Event

    @Flag(name: .long, help: "Print the verdicts as JSON.")
    var json = false

    @Argument(help: "The JSON files to check.", completion: .file())
    var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one file") }
    }

    func run() throws {
        let bundled = schema
        let validator: SchemaValidator
        do {
            validator = try bundled.validator()
        } catch {
            writeErrors([error], json: json)
            throw ToolExit(status: .usage)
        }
        var verdicts: [JSONValue] = []
        var allValid = true
        for file in files {
            var verdict = "valid"
            var errors: [FormatError] = []
            do throws(FormatError) {
                // `-` is standard input, bounded as every JSON document is, a file likewise.
                let bytes =
                    file == EventFileReader.standardInputName
                    ? Data(try EventFileReader.readStandardInput(limit: JSONReadingOptions().maximumBytes))
                    : Data(try EventFileReader.readBytes(at: URL(fileURLWithPath: file), limit: JSONReadingOptions().maximumBytes))
                let document = try JSONParser.parse(bytes)
                errors = validator.validate(document)
                if !errors.isEmpty { verdict = "invalid" }
            } catch {
                errors = [error]
                verdict = "unparseable"
            }
            errors = errors.map { $0.inFile(file) }
            if verdict != "valid" { allValid = false }
            verdicts.append(
                .object(
                    JSONObject([
                        ("file", .string(file)),
                        ("verdict", .string(verdict)),
                        ("errors", .array(errors.map(\.jsonValue))),
                    ])))
            if !json {
                writeStandardOutput(errors.isEmpty ? "\(escaped(file)): valid\n" : errors.map { "\(escaped($0))\n" }.joined())
            }
        }
        if json { writeJSON(.object(JSONObject([("files", .array(verdicts))]))) }
        if !allValid { throw ToolExit(status: .problemsFound) }
    }
}
