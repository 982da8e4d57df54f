import Foundation
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import MergeEngine
import CloudFolder

/// The inputs of a merge: folders, event files, loose parts and v1 logs, read into one pool
/// (Spec/merge.md section 3).
enum MergeInputs {
    /// Reads every INPUT into one pool (Spec/merge.md section 3); usage problems and
    /// unreadable files end the command with exit 2 or 1. With `summarize`, the events of
    /// folders keep only what the analysis needs, go into an ``EventStore`` (SQLite) as they are
    /// read, and are read again from their files for the replay: memory does not grow with the
    /// length of the history.
    ///
    /// `contentsRead` sees each folder's contents once read (for what only they tell, such as
    /// files still arriving).
    ///
    /// With `replayEarly` and a single folder as input, the events are also replayed as they are
    /// read (``EarlyReplay``; all of them, or those a rebase folds), which the merge (or rebase)
    /// uses when its analysis agrees.
    ///
    /// With `foldersOnly`, every input is read as a cloud folder (a file is then "no such
    /// folder"), and `severalEnsembles` words the refusal of a second ensemble for the command.
    static func gather(
        _ inputs: [String], reader: EventFileReader, summarize: Bool = false, replayEarly: EarlyReplay.Mode? = nil,
        modelVersions: ModelVersionCatalog? = nil, warnings: inout [FormatError], foldersOnly: Bool = false,
        severalEnsembles: (String) -> String = { _ in "the inputs hold more than one ensemble; merge one at a time" },
        contentsRead: ((EnsembleListing, EnsembleContents, _ highestComplete: [ExactString: Int64]) -> Void)? = nil
    ) throws(EnsembleError) -> MergeInput {
        var input = MergeInput()
        let store: EventStore?
        do {
            store = summarize ? try EventStore() : nil
        } catch {
            throw EnsembleError(.failure, error)
        }
        // An event of a folder is read again through the folder it was listed in; one given
        // directly, by its path.
        let folders = ReadFolders()
        input.loadBody = { sourced throws(FormatError) in
            try reader.readEvent(file: folders.file(sourced.file), parts: sourced.parts.map(folders.file), digest: sourced.contentDigest)
        }
        input.loadNumberedBody = { sourced throws(FormatError) in
            try reader.readNumberedEvent(file: folders.file(sourced.file), parts: sourced.parts.map(folders.file), digest: sourced.contentDigest)
        }
        input.model = reader.model
        input.modelHash = reader.model?.modelHash
        input.modelVersions = ModelVersionCatalog.forCheck(model: reader.model, known: modelVersions)
        var unreadable: [FormatError] = []
        var ensembles = 0
        // Part files given directly, by base name (Spec/merge.md 3.1); by bytes, so that the
        // sets of stores named in NFC and NFD stay two.
        var partGroups: [ExactString: [(path: String, index: Int, count: Int)]] = [:]
        for path in inputs {
            var isDirectory: ObjCBool = false
            // `-` is one event file or log read from standard input (Spec/merge.md 2).
            guard foldersOnly || path == EventFileReader.standardInputName || FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            else {
                throw EnsembleError(.usage, FormatError(.folderNotFound, "no such file or folder", location: .init(file: path)))
            }
            if !foldersOnly && !isDirectory.boolValue {
                let name = URL(fileURLWithPath: path).lastPathComponent
                // Without the wrapper suffixes (Spec/wrappers.md 5.3): `7_A_3_1of2.cdeevent.zip` is of set `7_A_3`.
                if let (base, part) = CloudFileName.partOfSet(name) {
                    partGroups[ExactString(base), default: []].append((path, part.index, part.count))
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
            let listings: [EnsembleListing]
            do {
                listings = try CloudFolderScanner().scan(path, listsEvents: store == nil)
            } catch {
                throw EnsembleError(.usage, FormatError(error.code, error.message, location: .init(file: path)))
            }
            ensembles += listings.count
            guard ensembles <= 1 else {
                throw EnsembleError(.usage, FormatError(.mergeSeveralEnsembles, severalEnsembles(path)))
            }
            for listing in listings {
                let base = listing.displayPath == "." ? path : Converter.join(path, listing.displayPath)
                folders.add(listing, base: base)
                let replaysEarly = inputs.count == 1 ? replayEarly : nil
                let sink = store.map { FolderSink(store: $0, base: base, input: input, replayEarly: replaysEarly) }
                // Replayed as they are read, the events are read again only when the analysis
                // disagrees: that rare second read checks them again instead of every first
                // read taking a fingerprint.
                var folderReader = reader
                folderReader.fingerprints = replaysEarly == nil || sink == nil
                let contents = EnsembleContents.read(listing, reader: folderReader, summarize: summarize, sink: sink)
                contentsRead?(listing, contents, sink?.highestComplete ?? [:])
                if let sink {
                    if let failure = sink.failure { throw EnsembleError(.failure, failure) }
                    input.baselines += sink.baselines
                    input.earlyReplay = sink.early
                }
                for problem in contents.problems.map({ $0.inFile(Converter.join(base, $0.location.file ?? "")) }) {
                    // An invalid registration still registers its store: a warning, not a stop.
                    if problem.code == .storeInvalid { warnings.append(problem) } else { unreadable.append(problem) }
                }
                input.registeredStores = Set(contents.stores.map { ExactString($0.storeIdentifier) })
                input.dataFiles = Set(contents.dataFiles.map { ExactString($0.name) })
                contents.forEachEntry { entry in
                    if let sourced = Self.sourced(entry, base: base) {
                        // The type, not the folder, decides the role (Spec/merge.md 4.1).
                        if sourced.event.type == .baseline { input.baselines.append(sourced) } else { input.events.append(sourced) }
                    } else if !entry.isComplete {
                        input.incompleteSets.append(entry.files.values.map { Converter.join(base, $0) })
                    }
                }
            }
        }
        for exactBase in partGroups.keys.sorted(by: { utf8Precedes($0.value, $1.value) }) {
            let base = exactBase.value
            let group = Self.distinctParts(partGroups[exactBase] ?? [])
            let counts = Set(group.map(\.count))
            guard counts.count == 1, let count = counts.first, Set(group.map(\.index)).count == group.count else {
                unreadable += group.map {
                    FormatError(.v2DuplicatePart, "these files share the base name \(base) but do not form one event", location: .init(file: $0.path))
                }
                continue
            }
            guard Set(group.map(\.index)) == Set(1...count) else {
                input.incompleteSets.append(group.map(\.path))
                continue
            }
            var parts: [EventPart] = []
            for member in group.sorted(by: { $0.index < $1.index }) {
                let result = reader.readPart(
                    at: URL(fileURLWithPath: member.path), position: .part(index: member.index, count: count), displayName: member.path)
                unreadable += result.errors
                if let part = result.part { parts.append(part) }
            }
            guard parts.count == count, let event = try? V2JSONDecoder.join(parts) else { continue }
            let sourced = SourcedEvent(event: event, file: group.first { $0.index == 1 }?.path ?? base)
            if event.type == .baseline { input.baselines.append(sourced) } else { input.events.append(sourced) }
        }
        guard unreadable.isEmpty else {
            throw EnsembleError(kind: .unreadable, problems: unreadable.map(IntegrityProblem.init(readError:)).sorted(by: IntegrityProblem.reportPrecedes))
        }
        if let store {
            do {
                try store.add(input.events)
            } catch {
                throw EnsembleError(.failure, error)
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
        // Compared by SHA-256, read in chunks: parts are never held whole for this.
        var digests: [ExactString: [UInt8]] = [:]
        func contents(_ path: String) -> [UInt8]? {
            if let known = digests[ExactString(path)] { return known }
            let digest = try? DataFileReader.digest(of: URL(fileURLWithPath: path))
            digests[ExactString(path)] = digest
            return digest
        }
        for member in group.sorted(by: { utf8Precedes($0.path, $1.path) }) {
            let same = kept.contains { other in
                other.index == member.index && other.count == member.count
                    && (exactlyEqual(other.path, member.path) || (contents(other.path).map { $0 == contents(member.path) } ?? false))
            }
            if !same { kept.append(member) }
        }
        return kept
    }

    /// Puts a folder's events into the event store as they are read, and replays them early
    /// when asked. Unchecked `Sendable`: what the inserting queue uses (`store`, `insertFailure`)
    /// is used nowhere else until it drained.
    private final class FolderSink: EnsembleReadingSink, @unchecked Sendable {
        let store: EventStore
        let base: String
        let input: MergeInput
        let replayEarly: EarlyReplay.Mode?
        private(set) var early: EarlyReplay?
        /// Events of type baseline found in `events/` (the type decides the role, Spec/merge.md 4.1).
        private(set) var baselines: [SourcedEvent] = []
        /// Events go into the store on a thread of their own, in the order read, so that the
        /// reading thread goes on to the next files meanwhile instead of leaving a core idle
        /// (Benchmarks/README.md); at most 8 batches wait, so memory stays bounded.
        private let inserting = DispatchQueue(label: "ensembles.event-store-insert")
        private let waiting = DispatchSemaphore(value: 8)
        private var insertFailure: FormatError?
        /// By store, the highest revision of the complete events handed over that are not of type
        /// 0: what ``EnsembleContents/events`` no longer holds (Spec/diagnostics.md 2.4, last row).
        private(set) var highestComplete: [ExactString: Int64] = [:]

        init(store: EventStore, base: String, input: MergeInput, replayEarly: EarlyReplay.Mode?) {
            self.store = store
            self.base = base
            self.input = input
            self.replayEarly = replayEarly
        }

        func read(baselines entries: [BaselineFileEntry], bodies: consuming [NumberedEvent?]) {
            guard let replayEarly else { return }
            var baselines: [SourcedEvent] = [], baselineBodies: [NumberedEvent?] = []
            for (index, entry) in zip(bodies.indices, entries) {
                guard let sourced = MergeInputs.sourced(entry.entry, base: base) else { continue }
                baselines.append(sourced)
                baselineBodies.append(bodies[index].take())
            }
            early = EarlyReplay(baselines: baselines, bodies: baselineBodies, input: input, mode: replayEarly)
        }

        var busy: (@Sendable () -> Bool)? {
            guard let early else { return nil }
            return { early.isBusy }
        }

        func read(events entries: [EventFileEntry], bodies: consuming [NumberedEvent?]) {
            var events: [SourcedEvent] = [], eventBodies: [NumberedEvent?] = []
            // Each body moved on, not copied (EnsembleContents.readGroups).
            for (index, entry) in zip(bodies.indices, entries) {
                guard let sourced = MergeInputs.sourced(entry.entry, base: base) else { continue }
                if sourced.event.type == .baseline {
                    baselines.append(sourced)
                    early?.abandon()
                } else {
                    if sourced.event.type != .incomplete {
                        let store = ExactString(sourced.event.storeIdentifier)
                        highestComplete[store] = max(highestComplete[store] ?? .min, sourced.event.revision)
                    }
                    events.append(sourced)
                    eventBodies.append(bodies[index].take())
                }
            }
            early?.offer(events, bodies: consume eventBodies)
            waiting.wait()
            inserting.async { [self, events] in
                defer { waiting.signal() }
                guard insertFailure == nil else { return }
                do throws(FormatError) {
                    try store.add(events)
                } catch {
                    insertFailure = error
                }
            }
        }

        /// The event store's first failure, once every batch read is in it.
        var failure: FormatError? { inserting.sync { insertFailure } }
    }

    /// The folders a merge read, held open until it ends, with the path their events' paths start
    /// with (``sourced(_:base:)``): an event read again for the replay is read through the folder
    /// that was listed (Spec/cloud-layout.md 7), not found again from its path.
    private final class ReadFolders: @unchecked Sendable {
        private let lock = NSLock()
        private var folders: [(prefix: String, folders: ListedFolders?)] = []

        /// Keeps the listing's folders (not its entries).
        func add(_ listing: EnsembleListing, base: String) {
            // `Converter.join(base, x)` is this prefix followed by `x`.
            let prefix = String(Converter.join(base, "x").utf8.dropLast()) ?? base + "/"
            lock.withLock { folders.append((prefix, listing.folders)) }
        }

        /// The event file at `path`, through the folder it was listed in when it is one of theirs.
        func file(_ path: String) -> FileReference {
            let held = lock.withLock { folders.first { path.utf8.starts(with: $0.prefix.utf8) } }
            guard let held, let folders = held.folders else { return FileReference(path: path) }
            return folders.file(String(decoding: path.utf8.dropFirst(held.prefix.utf8.count), as: UTF8.self), shownAs: path)
        }
    }

    /// A folder entry's event as the merge sees it, with paths from the input; nil when it could
    /// not be read.
    fileprivate static func sourced(_ entry: borrowing EventEntry, base: String) -> SourcedEvent? {
        guard let event = entry.event else { return nil }
        var sourced = entry.summary ?? SourcedEvent(event: event, file: entry.file, parts: entry.partFiles)
        sourced.file = Converter.join(base, entry.file)
        sourced.parts = sourced.parts.map { Converter.join(base, $0) }
        return sourced
    }
}
