import ArgumentParser
import Foundation
import JSONDocument
import EventCodecs
import MergeEngine
import CloudFolder
import EnsembleModel
import SQLiteExport

struct Merge: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay events to the final store state, as every device must (Spec/merge.md).",
        discussion: """
        INPUT is a cloud folder (one ensemble), event files or v1 logs; all are merged together. \\
        The state is printed as canonical JSON. When an integrity check fails, nothing is printed \\
        on standard output and every failure goes to standard error with the original framework's \\
        number. Exit status: 0 merged, 1 integrity failure or unreadable input, 2 usage error.
        """
    )

    @OptionGroup var options: ReadingOptions

    @Option(name: .long, help: "Write the state to FILE (atomically) instead of standard output.")
    var out: String?

    @Option(name: .long, help: "Also write the state into a new SQLite database FILE (a table per entity, a join table per to-many).")
    var sqlite: String?

    @Argument(help: "Cloud folders, event files or v1 logs.")
    var inputs: [String]

    func validate() throws {
        try options.validateModelVersion()
        guard !inputs.isEmpty else { throw ValidationError("give at least one input") }
    }

    func run() throws {
        let reader = try options.reader()
        let input = try MergeInputs.gather(inputs, reader: reader, summarize: true, replayEarly: true)
        let state: StoreState
        do {
            state = try MergeEngine.merge(input)
            if let sqlite { try StateDatabase.write(state, to: sqlite) }
        } catch let error as FormatError {
            writeStandardError("logtool: \(error)")
            throw ToolExit(status: error.code == .sqliteDestinationExists ? .usage : .problemsFound)
        } catch let failure as MergeFailure {
            MergeInputs.report(failure.problems)
            throw ToolExit(status: .problemsFound)
        }
        try write(state)
    }

    /// Streams the state document to standard output, or to `--out` through a temporary file
    /// beside it that replaces the destination only once it is complete.
    private func write(_ state: StoreState) throws {
        let destination = out.map { URL(fileURLWithPath: $0).standardizedFileURL }
        let temporary = destination.map { $0.deletingLastPathComponent().appendingPathComponent(".\($0.lastPathComponent).partial-\(UUID().uuidString)") }
        defer { if let temporary { try? FileManager.default.removeItem(at: temporary) } }
        let handle: FileHandle
        if let temporary {
            guard FileManager.default.createFile(atPath: temporary.path, contents: nil), let opened = try? FileHandle(forWritingTo: temporary) else {
                writeStandardError("logtool: \(out ?? ""): could not write the state: cannot create a file in \(temporary.deletingLastPathComponent().path)")
                throw ToolExit(status: .usage)
            }
            handle = opened
        } else {
            handle = FileHandle.standardOutput
        }
        var failure: Error?
        do {
            try state.writeDocument { bytes in
                guard failure == nil else { return }
                do { try handle.write(contentsOf: bytes) } catch { failure = error }
            }
        } catch {
            writeStandardError("logtool: \(error)")
            throw ToolExit(status: .problemsFound)
        }
        do {
            if let failure { throw failure }
            try handle.write(contentsOf: [UInt8(ascii: "\n")])
            if let temporary, let destination {
                try handle.synchronize()
                try handle.close()
                guard rename(temporary.path, destination.path) == 0 else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: String(cString: strerror(errno))])
                }
            }
        } catch {
            writeStandardError("logtool: \(out ?? "standard output"): could not write the state: \(error.localizedDescription)")
            throw ToolExit(status: out == nil ? .problemsFound : .usage)
        }
    }
}

/// The inputs of `merge` and `history`: folders, event files, loose parts and v1 logs.
enum MergeInputs {
    /// One line per finding or read error (Spec/merge.md 5.9).
    static func report(_ problems: [IntegrityProblem]) {
        for problem in problems { writeStandardError(FindingLine.render(problem)) }
    }

    /// Reads every INPUT into one pool (Spec/merge.md section 3); usage problems and
    /// unreadable files end the command with exit 2 or 1. With `summarize`, the events of
    /// folders keep only what the analysis needs, go into an ``EventStore`` (SQLite) as they are
    /// read, and are read again from their files for the replay: memory does not grow with the
    /// length of the history.
    ///
    /// With `replayEarly` and a single folder as input, the events are also replayed as they are
    /// read (``EarlyReplay``), which the merge uses when its analysis agrees.
    static func gather(_ inputs: [String], reader: EventFileReader, summarize: Bool = false, replayEarly: Bool = false) throws -> MergeInput {
        var input = MergeInput()
        let store: EventStore?
        do {
            store = summarize ? try EventStore() : nil
        } catch {
            writeStandardError("logtool: \(error)")
            throw ToolExit(status: .problemsFound)
        }
        input.loadBody = { sourced throws(FormatError) in try reader.readEvent(file: sourced.file, parts: sourced.parts, digest: sourced.contentDigest) }
        input.model = reader.model
        input.modelHash = reader.model?.modelHash
        var unreadable: [FormatError] = []
        var ensembles = 0
        // Part files given directly, by base name (Spec/merge.md 3.1).
        var partGroups: [String: [(path: String, index: Int, count: Int)]] = [:]
        for path in inputs {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                writeStandardError("logtool: \(path): no such file or folder")
                throw ToolExit(status: .usage)
            }
            if !isDirectory.boolValue {
                let name = URL(fileURLWithPath: path).lastPathComponent
                if let part = CloudFileName.parseEvent(name)?.part ?? CloudFileName.parseBaseline(name)?.part {
                    let base = String(name.dropLast(CloudFileName.eventExtension.count).split(separator: "_").dropLast().joined(separator: "_"))
                    partGroups[base, default: []].append((path, part.index, part.count))
                    continue
                }
                let result = reader.readFile(at: URL(fileURLWithPath: path), displayName: path)
                unreadable += result.errors
                for event in result.events {
                    let sourced = SourcedEvent(event: event, file: path)
                    if event.type == .baseline { input.baselines.append(sourced) } else { input.events.append(sourced) }
                }
                continue
            }
            // Streaming: the event files are indexed as they are found, never listed.
            let listings = try scanOrExit(path, listsEvents: store == nil)
            ensembles += listings.count
            guard ensembles <= 1 else {
                writeStandardError("merge.several-ensembles: the inputs hold more than one ensemble; merge one at a time")
                throw ToolExit(status: .usage)
            }
            for listing in listings {
                let base = listing.displayPath == "." ? path : Converter.join(path, listing.displayPath)
                let sink = store.map { FolderSink(store: $0, base: base, input: input, replayEarly: replayEarly && inputs.count == 1) }
                let contents = EnsembleContents.read(listing, reader: reader, summarize: summarize, sink: sink)
                if let sink {
                    if let failure = sink.failure {
                        writeStandardError("logtool: \(failure)")
                        throw ToolExit(status: .problemsFound)
                    }
                    input.baselines += sink.baselines
                    input.earlyReplay = sink.early
                }
                for problem in contents.problems.map({ $0.inFile(Converter.join(base, $0.location.file ?? "")) }) {
                    // An invalid registration still registers its store: a warning, not a stop.
                    if problem.code == .storeInvalid { writeStandardError("warning: \(problem)") } else { unreadable.append(problem) }
                }
                input.registeredStores = Set(contents.stores.map(\.storeIdentifier))
                input.dataFiles = Set(contents.dataFiles.map(\.name))
                for entry in contents.events.map(\.entry) + contents.baselines.map(\.entry) {
                    if let sourced = Self.sourced(entry, base: base) {
                        // The type, not the folder, decides the role (Spec/merge.md 4.1).
                        if sourced.event.type == .baseline { input.baselines.append(sourced) } else { input.events.append(sourced) }
                    } else if !entry.isComplete {
                        input.incompleteSets.append(entry.files.values.map { Converter.join(base, $0) })
                    }
                }
            }
        }
        for base in partGroups.keys.sorted(by: utf8Precedes) {
            let group = Self.distinctParts(partGroups[base] ?? [])
            let counts = Set(group.map(\.count))
            guard counts.count == 1, let count = counts.first, Set(group.map(\.index)).count == group.count else {
                unreadable += group.map { FormatError(.v2DuplicatePart, "these files share the base name \(base) but do not form one event", location: .init(file: $0.path)) }
                continue
            }
            guard Set(group.map(\.index)) == Set(1...count) else {
                input.incompleteSets.append(group.map(\.path))
                continue
            }
            var parts: [EventPart] = []
            for member in group.sorted(by: { $0.index < $1.index }) {
                let result = reader.readPart(at: URL(fileURLWithPath: member.path), position: .part(index: member.index, count: count), displayName: member.path)
                unreadable += result.errors
                if let part = result.part { parts.append(part) }
            }
            guard parts.count == count, let event = try? V2JSONDecoder.join(parts) else { continue }
            let sourced = SourcedEvent(event: event, file: group.first { $0.index == 1 }?.path ?? base)
            if event.type == .baseline { input.baselines.append(sourced) } else { input.events.append(sourced) }
        }
        guard unreadable.isEmpty else {
            report(unreadable.map(IntegrityProblem.init(readError:)).sorted(by: IntegrityProblem.reportPrecedes))
            throw ToolExit(status: .problemsFound)
        }
        if let store {
            do {
                try store.add(input.events)
            } catch {
                writeStandardError("logtool: \(error)")
                throw ToolExit(status: .problemsFound)
            }
            input.events = []
            input.eventStore = store
        }
        return input
    }

    /// A part file given twice, or a byte-identical copy of it, is one part: the first path in
    /// UTF-8 order stands for it (Spec/merge.md 3.1). Copies that differ stay, for the caller
    /// to report as an inconsistent group.
    private static func distinctParts(_ group: [(path: String, index: Int, count: Int)]) -> [(path: String, index: Int, count: Int)] {
        var kept: [(path: String, index: Int, count: Int)] = []
        var bytes: [String: Data] = [:]
        func contents(_ path: String) -> Data? {
            if let known = bytes[path] { return known }
            let read = FileManager.default.contents(atPath: path)
            bytes[path] = read
            return read
        }
        for member in group.sorted(by: { utf8Precedes($0.path, $1.path) }) {
            let same = kept.contains { other in
                other.index == member.index && other.count == member.count
                    && (other.path == member.path || (contents(other.path).map { $0 == contents(member.path) } ?? false))
            }
            if !same { kept.append(member) }
        }
        return kept
    }

    /// Puts a folder's events into the event store as they are read, and replays them early
    /// when asked.
    private final class FolderSink: EnsembleReadingSink {
        let store: EventStore
        let base: String
        let input: MergeInput
        let replayEarly: Bool
        private(set) var early: EarlyReplay?
        /// Events of type baseline found in `events/` (the type decides the role, Spec/merge.md 4.1).
        private(set) var baselines: [SourcedEvent] = []
        private(set) var failure: FormatError?

        init(store: EventStore, base: String, input: MergeInput, replayEarly: Bool) {
            self.store = store
            self.base = base
            self.input = input
            self.replayEarly = replayEarly
        }

        func read(baselines entries: [BaselineFileEntry]) {
            guard replayEarly else { return }
            early = EarlyReplay(baselines: entries.compactMap { MergeInputs.sourced($0.entry, base: base) }, input: input)
        }

        func read(events entries: [EventFileEntry], bodies: [Event?]) {
            var events: [SourcedEvent] = [], eventBodies: [Event?] = []
            for (entry, body) in zip(entries, bodies) {
                guard let sourced = MergeInputs.sourced(entry.entry, base: base) else { continue }
                if sourced.event.type == .baseline {
                    baselines.append(sourced)
                    early?.abandon()
                } else {
                    events.append(sourced)
                    eventBodies.append(body)
                }
            }
            early?.offer(events, bodies: eventBodies)
            guard failure == nil else { return }
            do throws(FormatError) {
                try store.add(events)
            } catch {
                failure = error
            }
        }
    }

    /// A folder entry's event as the merge sees it, with paths from the input; nil when it could
    /// not be read.
    fileprivate static func sourced(_ entry: EventEntry, base: String) -> SourcedEvent? {
        guard let event = entry.event else { return nil }
        var sourced = entry.summary ?? SourcedEvent(event: event, file: entry.file, parts: entry.partFiles)
        sourced.file = Converter.join(base, entry.file)
        sourced.parts = sourced.parts.map { Converter.join(base, $0) }
        return sourced
    }
}
