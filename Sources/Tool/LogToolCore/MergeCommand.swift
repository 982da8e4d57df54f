import ArgumentParser
import Foundation
import SQLiteExport
import EnsemblesToolkit
import TemporaryFiles

struct Merge: ParsableCommand, HasOutputOptions {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Replay events to the final store state, as every device must (Spec/merge.md).",
        discussion: """
            INPUT is a cloud folder (one ensemble), event files or v1 logs; all are merged together. \
            The state is printed as canonical JSON. When an integrity check fails, nothing is printed \
            on standard output and every failure goes to standard error with the original framework's \
            number. Exit status: 0 merged, 1 integrity failure or unreadable input, 2 usage error.

            A TICoreDataSync document folder is replayed instead (Spec/ticds.md 10): its WholeStore, read \
            with the app's model (--model, required), then every change set its client had not applied, \
            in the framework's order, to the same state document.

            Examples:
              logtool merge cloud/MainStore > state.json
              logtool merge --model Model.xcdatamodeld --out state.json cloud/MainStore
              logtool merge --lenient --model Model.xcdatamodeld --sqlite s.db log.json
              logtool merge --model Notebook.xcdatamodel --conflicts remote App/Documents/DOC
            """
    )

    @OptionGroup(title: "Output Options") var outputOptions: OutputOptions

    @OptionGroup var options: ReadingOptions

    @OptionGroup var modelVersions: ModelVersionOptions

    @Option(name: .long, help: ArgumentHelp("Write the state to FILE (atomically) instead of standard output.", valueName: "FILE"), completion: .file())
    var out: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Also write the state into a new SQLite database FILE (a table per entity, a join table per to-many).", valueName: "FILE"),
        completion: .file())
    var sqlite: String?

    @Flag(name: .long, help: "Replace the --out or --sqlite FILE if it exists (only once the new one is complete).")
    var force = false

    @Flag(
        name: .long,
        help:
            "On failure, print the findings as one JSON document on standard output instead of lines on standard error; with --as-store, print the device report there."
    )
    var json = false

    @Option(
        name: .customLong("as-store"),
        help: ArgumentHelp(
            "Merge as device STORE does (Spec/merge.md 15): integrate what it can, print the state it reaches and report the events it holds back.",
            valueName: "STORE"))
    var asStore: String?

    @Option(
        name: .customLong("as-client"),
        help: ArgumentHelp(
            "For a TICoreDataSync document: replay from client ID's WholeStore (default: the one a downloading client takes; Spec/ticds.md 10.1).",
            valueName: "ID"))
    var asClient: String?

    @OptionGroup var ticdsDates: TICDSDatesOption

    @Option(
        name: .long,
        help: ArgumentHelp(
            "For a TICoreDataSync document: answer every conflict as the app would, remote (the other client's change wins) or local (Spec/ticds.md 10.5); without it the replay stops at the first.",
            valueName: "remote|local"))
    var conflicts: ConflictChoice?

    @OptionGroup(title: "Remote Folder Options") var remote: RemoteOptions

    @Argument(help: "Cloud folders, event files or v1 logs, or a remote folder's URL (Spec/remote.md).", completion: .file())
    var inputs: [String]

    func validate() throws {
        try options.validateModelVersion()
        guard !inputs.isEmpty else { throw ValidationError("give at least one input") }
        if asStore != nil && (asClient != nil || ticdsDates.dates != nil || conflicts != nil) {
            throw ValidationError(
                "--as-store reads an Ensembles folder as a device; --as-client, --dates and --conflicts replay a TICoreDataSync document: give one or the other"
            )
        }
    }

    func run() throws {
        if let out { try checkDestination(out, force: force, existsCode: .mergeDestinationExists, json: json) }
        if let sqlite { try checkDestination(sqlite, force: force, existsCode: .sqliteDestinationExists, json: json) }
        // A URL is read from a private snapshot (Spec/remote.md 5.1).
        let (inputs, temporary) = try RemoteInputs.localize(self.inputs, remote, json: json)
        defer { RemoteInputs.remove(temporary) }
        let ensemble = Ensemble(inputs: inputs, options: try options.ensembleOptions(modelVersions, json: json))
        if inputs.count == 1 && asStore == nil && Ensemble.looksLikeTICDSFolder(inputs[0]) { return try runTICDS(ensemble) }
        if asClient != nil || ticdsDates.dates != nil || conflicts != nil {
            writeErrors(
                [FormatError(.ticdsNotTICDSFolder, "--as-client, --dates and --conflicts apply to a TICoreDataSync folder", location: .init(file: inputs[0]))],
                json: json)
            throw ToolExit(status: .usage)
        }
        if let asStore { return try runAsDevice(ensemble, store: asStore) }
        var warnings: [FormatError] = []
        // Without --sqlite, the state replayed while the folder was read is written while the
        // integrity checks run (they use one core), and kept only if they take it: beside
        // --out, or held back for standard output (its first HeldDocument.budget bytes).
        var staged: StagedState?
        var held: HeldDocument?
        var overlap: ((StoreState) -> Void)?
        if sqlite == nil {
            if let out {
                overlap = { staged = StagedState($0, out: out, replacing: force, inBackground: true) }
            } else {
                overlap = { held = HeldDocument($0) }
            }
        }
        let state: StoreState
        let isStaged: Bool
        do {
            (state, isStaged) = try ensemble.merge(warnings: &warnings, whileChecking: overlap)
        } catch {
            staged?.discard()
            held?.discard()
            for warning in warnings { writeWarning(warning) }
            throw reportAndExit(error, json: json)
        }
        for warning in warnings { writeWarning(warning) }
        if isStaged, let staged {
            try staged.commit()
        } else if isStaged, let held {
            try writeToStandardOutput { () throws(FormatError) in try held.commit() }
        } else {
            staged?.discard()
            held?.discard()
            try output(state)
        }
        keepUntilExit(state)
    }

    /// The replay of a TICoreDataSync document (Spec/ticds.md 10): its state goes where a
    /// merge's would; where the replay stops, the finding is reported as a merge's (exit 1).
    private func runTICDS(_ ensemble: Ensemble) throws {
        var warnings: [FormatError] = []
        let state: StoreState
        do {
            state = try ensemble.mergeTICDS(asClient: asClient, datesFile: ticdsDates.dates, remoteWins: conflicts.map { $0 == .remote }, warnings: &warnings)
        } catch {
            for warning in warnings { writeWarning(warning) }
            throw reportAndExit(error, json: json)
        }
        for warning in warnings { writeWarning(warning) }
        try output(state)
    }

    /// Device mode (Spec/merge.md 15.6): the state the device reaches goes where a merge's
    /// would; each held-back event is a finding line on standard error. With `--json`, standard
    /// output holds one document `{"device": REPORT, "state": STATE or null}`. Exit 0 only when
    /// the device integrates every visible event.
    private func runAsDevice(_ ensemble: Ensemble, store: String) throws {
        var warnings: [FormatError] = []
        // As for a merge: the state replayed as the folder was read is written to standard output
        // while the device's checks run (not with --json, --out or --sqlite).
        var held: HeldDocument?
        let overlap: ((StoreState) -> Void)? = json || out != nil || sqlite != nil ? nil : { held = HeldDocument($0) }
        let view: DeviceView
        let isHeld: Bool
        do {
            (view, isHeld) = try ensemble.integrate(as: store, warnings: &warnings, whileChecking: overlap)
        } catch {
            held?.discard()
            for warning in warnings { writeWarning(warning) }
            throw reportAndExit(error, json: json)
        }
        for warning in warnings { writeWarning(warning) }
        // With --json the findings are in the report: standard error holds warnings only (merge.md 10).
        if !json { for finding in view.findings { writeStandardError(FindingLine.render(finding)) } }
        if json {
            if let state = view.state, out != nil || sqlite != nil { try output(state, toStandardOutput: false) }
            Console.out(Data(("{\"device\":" + JSONWriter().string(view.report) + ",\"state\":").utf8))
            do {
                if let state = view.state { try state.writeDocument { Console.out(Data($0)) } } else { Console.out(Data("null".utf8)) }
            } catch {
                writeErrors([error], json: json)
                throw ToolExit(status: .problemsFound)
            }
            Console.out(Data("}\n".utf8))
        } else if isHeld, let held {
            try writeToStandardOutput { () throws(FormatError) in try held.commit() }
        } else if let state = view.state {
            held?.discard()
            try output(state)
        } else {
            held?.discard()
        }
        keepUntilExit(view)
        if !view.integratesEverything { throw ToolExit(status: .problemsFound) }
    }

    private func output(_ state: StoreState, toStandardOutput: Bool = true) throws {
        do {
            if let sqlite { try StateDatabase.write(state, to: sqlite, replacing: force) }
        } catch {
            writeErrors([error], json: json)
            throw ToolExit(status: error.code == .sqliteDestinationExists ? .usage : .problemsFound)
        }
        if out != nil || toStandardOutput { try write(state) }
    }

    /// Streams the state document to standard output (through the console, which turns a
    /// failed write into exit 1), or to `--out` through a temporary file beside it that replaces
    /// the destination only once it is complete.
    private func write(_ state: StoreState) throws {
        guard let out else { return try writeToStandardOutput { () throws(FormatError) in try state.writeDocument { Console.out(Data($0)) } } }
        try StagedState(state, out: out, replacing: force, inBackground: false).commit()
    }

    /// Runs `write`, which puts the state document on standard output, then ends it with one LF;
    /// a document that cannot be written (Spec/merge.md 9) is reported, exit 1.
    private func writeToStandardOutput(_ write: () throws(FormatError) -> Void) throws {
        do {
            try write()
        } catch {
            writeErrors([error], json: json)
            throw ToolExit(status: .problemsFound)
        }
        Console.out(Data([UInt8(ascii: "\n")]))
    }
}

/// The state document made on another thread while the integrity checks run, for standard
/// output: its first `budget` bytes (at least one batch of objects) are held in memory, and on
/// ``commit()`` written out, then the rest written after them. Nothing reaches standard output
/// before the checks take the state.
final class HeldDocument: @unchecked Sendable {
    /// How much of the document is held: 32 MiB (the whole document of a state of about 140,000
    /// objects like the benchmarks', 23 MB for 100,000); a test sets less, to write the rest after
    /// the part held.
    @TaskLocal static var budget = 32 << 20

    private let state: StoreState
    private let written = DispatchGroup()
    // Set by the writing thread, read after `written` is waited for.
    private var pieces: [[UInt8]] = []
    private var resumeAt: Int?
    private var failure: FormatError?

    init(_ state: StoreState) {
        self.state = state
        let budget = Self.budget
        DispatchQueue.global().async(group: written) { [self] in
            var held = 0
            do throws(FormatError) {
                resumeAt = try state.writeDocument(resumingAt: 0) { bytes in
                    pieces.append(bytes)
                    held += bytes.count
                    return held < budget
                }
            } catch {
                failure = error
            }
        }
    }

    /// Waits for the part held, writes it to standard output, then the rest of the document.
    func commit() throws(FormatError) {
        written.wait()
        if let failure { throw failure }
        for piece in pieces { Console.out(Data(piece)) }
        pieces = []
        if let resumeAt {
            _ = try state.writeDocument(resumingAt: resumeAt) { bytes in
                Console.out(Data(bytes))
                return true
            }
        }
    }

    /// Waits for the writing thread and drops what it made.
    func discard() {
        written.wait()
        pieces = []
    }
}

/// The app's answer to a TICoreDataSync conflict (Spec/ticds.md 10.5).
enum ConflictChoice: String, ExpressibleByArgument, CaseIterable {
    case remote, local
}

/// The state document written to a temporary file beside `--out`, on another thread when asked:
/// it replaces the destination only on ``commit()``, once complete and flushed; ``discard()``
/// removes it.
private final class StagedState: @unchecked Sendable {
    private let out: String
    private let replacing: Bool
    private let destination: URL
    private let temporary: URL
    private let written = DispatchGroup()
    // Set by the writing thread, read after `written` is waited for.
    private var handle: FileHandle?
    /// What stopped the write: the message for standard error and the exit status.
    private var failure: (error: FormatError, status: ExitStatus)?

    init(_ state: StoreState, out: String, replacing: Bool, inBackground: Bool) {
        self.out = out
        self.replacing = replacing
        destination = URL(fileURLWithPath: out).standardizedFileURL
        temporary = TemporaryFiles.reserveSibling(of: destination)
        if inBackground {
            DispatchQueue.global().async(group: written) { [self] in write(state) }
        } else {
            write(state)
        }
    }

    private func write(_ state: StoreState) {
        guard let handle = try? TemporaryFiles.openFile(temporary) else {
            failure = (
                FormatError(
                    .fileWriteFailed, "could not write the state: cannot create a file in \(temporary.deletingLastPathComponent().path)",
                    location: .init(file: out)), .usage
            )
            return
        }
        self.handle = handle
        var writeFailure: Error?
        do {
            try state.writeDocument { bytes in
                guard writeFailure == nil else { return }
                do { try handle.write(contentsOf: bytes) } catch { writeFailure = error }
            }
        } catch {
            failure = (error, .problemsFound)
            return
        }
        do {
            if let writeFailure { throw writeFailure }
            try handle.write(contentsOf: [UInt8(ascii: "\n")])
            try handle.synchronize()
        } catch {
            failure = (FormatError(.fileWriteFailed, "could not write the state: \(error.localizedDescription)", location: .init(file: out)), .usage)
        }
    }

    /// Waits for the write, then puts the file in place of the destination, or reports what
    /// stopped it (nothing replaces the destination then).
    func commit() throws {
        written.wait()
        defer { TemporaryFiles.release(temporary) }
        if let failure {
            try? handle?.close()
            writeErrors([failure.error])
            throw ToolExit(status: failure.status)
        }
        try? handle?.close()
        try publishOutput(temporary, at: destination, path: out, replacing: replacing, what: "the state", existsCode: .mergeDestinationExists, failure: .usage)
    }

    /// Waits for the write and removes the file.
    func discard() {
        written.wait()
        try? handle?.close()
        TemporaryFiles.release(temporary)
    }
}
