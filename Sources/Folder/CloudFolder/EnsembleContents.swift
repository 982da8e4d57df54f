import ParallelWork
import Foundation
import JSONDocument
import DataModel
import EnsembleModel
import EventCodecs
import ProgressReporting
import FileWrappers

/// A store's `stores/<identifier>` registration. The file's existence registers the store;
/// `leechDate` is nil when its content is invalid (reported separately).
package struct StoreRegistration: Hashable, Sendable {
    package var storeIdentifier: String
    package var leechDate: Date?
    package var file: String
}

/// One logical event or baseline of a folder: a single file or a multipart set.
package struct EventEntry: Sendable {
    /// The file of part 1, or the lowest part present when part 1 is missing.
    package var file: String
    /// The files of a multipart set by part index; nil for a single file, which is ``file``
    /// (readers keep one entry per event: no table for the usual single file).
    private var parts: [Int: String]?
    package var bytes: Int64
    /// The part count from the names, nil for a single file.
    package var partCount: Int?
    /// What was decoded: the whole event, or its summary, which replaces it. One of the two
    /// only: a folder's reader keeps an entry per event, and room for both made an entry a
    /// third larger (Benchmarks/README.md, memory per event).
    private enum Decoded: Sendable {
        case none
        case event(Event)
        case summary(SourcedEvent)
    }

    private var decoded: Decoded

    /// With `summarize`: the event as the merge analysis needs it, object changes dropped. Once
    /// set, it is also ``event``, which then keeps no copy of its own.
    package var summary: SourcedEvent? {
        get {
            guard case .summary(let summary) = decoded else { return nil }
            return summary
        }
        set {
            if let newValue {
                decoded = .summary(newValue)
            } else if case .summary = decoded {
                decoded = .none
            }
        }
    }

    package init(file: String, files: [Int: String], bytes: Int64, partCount: Int?, event: Event?) {
        self.file = file
        parts = files.count == 1 && files[1].map({ exactlyEqual($0, file) }) == true ? nil : files
        self.bytes = bytes
        self.partCount = partCount
        decoded = event.map(Decoded.event) ?? .none
    }

    /// Every file of the set, by part index (one entry for a single-file event).
    package var files: [Int: String] { parts ?? [1: file] }
    /// The decoded event; nil when a file is unreadable or a part is missing. Without its object
    /// changes when the folder was read with `summarize` (it is the ``summary``'s then). Set by
    /// the reader before any summary is made, which then replaces it; setting it replaces a
    /// summary too.
    package var event: Event? {
        get {
            switch decoded {
            case .none: nil
            case .event(let event): event
            case .summary(let summary): summary.event
            }
        }
        set { decoded = newValue.map(Decoded.event) ?? .none }
    }
    /// How many object changes of each type the event holds; nil when ``event`` is. A summary
    /// keeps its counts, not its changes.
    package var changeCounts: SourcedEvent.ChangeCounts? {
        switch decoded {
        case .none: nil
        case .event(let event): SourcedEvent.ChangeCounts(event.objectChanges)
        case .summary(let summary): summary.changeCounts
        }
    }
    /// ``EventFileReader/combinedDigest(_:)`` of the files' bytes, when all were read.
    package var digest: UInt64?
    /// The wrappers removed from its files (Spec/wrappers.md 5), those of the first file that
    /// could be unwrapped; empty for plain files.
    package var layers: [WrapperLayer] = []
    /// The files of the set in part order.
    package var partFiles: [String] { partCount == nil ? [] : files.keys.sorted().compactMap { files[$0] } }
    package var isComplete: Bool { partCount.map { files.count == $0 } ?? true }
}

/// How many files of a folder share one stack of layers, and the first of them in string order.
package struct WrappingCount: Hashable, Sendable {
    package var files = 0
    /// At most ``maximumExamples`` files, the first in string order.
    package var examples: [String] = []
    static let maximumExamples = 3

    /// Counts `file`, keeping ``examples`` sorted: a file enters only when it comes before the
    /// last of them, so a folder's files cost one comparison each, not a sort each.
    mutating func add(_ file: String) {
        files += 1
        if examples.count == Self.maximumExamples, let last = examples.last, !utf8Precedes(file, last) { return }
        examples.insert(file, at: examples.firstIndex { utf8Precedes(file, $0) } ?? examples.endIndex)
        if examples.count > Self.maximumExamples { examples.removeLast() }
    }
}

/// An event file with what its name says.
package struct EventFileEntry: Sendable {
    package var name: EventFileName
    package var entry: EventEntry
}

/// A baseline with what its name says.
package struct BaselineFileEntry: Sendable {
    package var name: BaselineFileName
    package var entry: EventEntry
}

/// A debris entry and why it is debris.
package struct DebrisEntry: Hashable, Sendable {
    package var path: String
    package var kind: DebrisKind
    package var reason: String
}

/// A file of `data/`.
package struct DataFileEntry: Hashable, Sendable {
    package var name: String
    package var bytes: Int64
    /// Its path relative to the ensemble: `data/NAME`, or inside a duplicate folder.
    package var file: String
}

/// An unknown key found in a file.
package struct UnknownKey: Hashable, Sendable {
    package var file: String
    package var pointer: JSONPointer

    package init(file: String, pointer: JSONPointer) {
        self.file = file
        self.pointer = pointer
    }
}

/// Receives what ``EnsembleContents/read(_:reader:summarize:sink:)`` reads, as it reads it.
package protocol EnsembleReadingSink: AnyObject {
    /// Every baseline of `baselines/` (readable or not), before any event; `bodies[i]` is the
    /// object changes of `baselines[i]` in numbered form when it was summarized.
    func read(baselines: [BaselineFileEntry], bodies: consuming [NumberedEvent?])
    /// Readable events of `events/`, a chunk at a time, in the order their names give (global
    /// count, store, revision), the files of one global count always in one chunk. `bodies[i]`
    /// is the object changes of `events[i]` in numbered form when it was summarized.
    func read(events: [EventFileEntry], bodies: consuming [NumberedEvent?])
    /// A test, callable from any thread, of whether the sink has enough events waiting that one
    /// thread reading keeps it busy: a thread helping the reader that finds it so takes no more
    /// files of the chunk being read, and leaves its core to the sink. Nil: never busy.
    var busy: (@Sendable () -> Bool)? { get }
}

/// Everything an ensemble folder holds, read and decoded; problems are collected, not thrown.
package struct EnsembleContents: Sendable {
    /// Asked once: on Linux each question reads two cgroup files, and a folder is read in
    /// hundreds of chunks.
    private static let cores = ProcessInfo.processInfo.activeProcessorCount

    package var identifier: String
    package var displayPath: String
    package var stores: [StoreRegistration] = []
    /// Sorted by (global count, store, revision).
    package var events: [EventFileEntry] = []
    /// Sorted by (global count, file).
    package var baselines: [BaselineFileEntry] = []
    package var dataFiles: [DataFileEntry] = []
    package var debris: [DebrisEntry] = []
    /// The duplicate folders whose files were folded in (Spec/cloud-layout.md 3.1).
    package var duplicates: [DuplicateFolder] = []
    /// Every problem that stopped a file from being read, attributed to the file.
    package var problems: [FormatError] = []
    package var unknownKeys: [UnknownKey] = []
    /// The binary event files that have sections of unknown type, which are skipped when read and
    /// which no writer here keeps (Spec/v2-binary.md 5.5).
    package var filesWithUnknownSections: [String] = []
    /// How the files of `stores/`, `events/` and `baselines/` were wrapped: for each stack of
    /// layers met (the empty stack for plain files), how many files and the first few of them
    /// (Spec/wrappers.md 8, `verify.mixed-wrapping`).
    package var wrapping: [[WrapperLayer]: WrappingCount] = [:]
    /// The one stack of layers every file of `stores/`, `events/` and `baselines/` that could be
    /// unwrapped has (empty: plain, or no such file), or nil when they differ. The layers its data
    /// files are taken to have when it is rewritten (Spec/wrappers.md 8).
    package var folderLayers: [WrapperLayer]? {
        guard wrapping.count <= 1 else { return nil }
        return wrapping.keys.first ?? []
    }

    /// Calls `body` with each event's entry, then each baseline's, where they are stored: a
    /// joined list of the two would be a second copy of every entry of the folder.
    package func forEachEntry(_ body: (borrowing EventEntry) throws -> Void) rethrows {
        for index in events.indices { try body(events[index].entry) }
        for index in baselines.indices { try body(baselines[index].entry) }
    }
    private var internedStrings: [ExactString: String] = [:]

    /// The one stored copy of a string equal (byte for byte) to `string`.
    mutating func interned(_ string: String) -> String {
        if let known = internedStrings[ExactString(string)] { return known }
        internedStrings[ExactString(string)] = string
        return string
    }

    /// Lists and reads one ensemble folder. With `summarize`, each event's object changes are
    /// dropped as soon as it is read. With `sink`, the baselines are read first, and the readable
    /// events of `events/` are handed to the sink as they are read instead of being kept in
    /// ``events`` (which then holds only the unreadable and incomplete ones): memory then does
    /// not grow with the length of the history. `observe` sees each readable event and baseline
    /// whole, with its object changes, before they are dropped; `observeChanges` sees its header
    /// and its object changes in numbered form (verify's objects step, Spec/verify.md 2: decoded
    /// in numbered form, as a merge decodes them, unless `observe` asks for them whole).
    package static func read(
        _ listing: EnsembleListing, reader: EventFileReader = EventFileReader(), summarize: Bool = false,
        sink: EnsembleReadingSink? = nil, observe: ((_ file: String, _ event: Event) -> Void)? = nil,
        observeChanges: ((_ file: String, _ header: Event, _ changes: NumberedEvent) -> Void)? = nil
    ) -> EnsembleContents {
        var contents = EnsembleContents(identifier: listing.identifier, displayPath: listing.displayPath)
        contents.problems = listing.problems
        contents.duplicates = listing.duplicates
        // Files grouped by base name (the stem without its part suffix), in listing order.
        var eventGroups: [EventGroupKey: (name: EventFileName, files: [(part: PartNumber?, entry: ListedEntry)])] = [:]
        var baselineGroups: [ExactString: (name: BaselineFileName, files: [(part: PartNumber?, entry: ListedEntry)])] = [:]
        func take(_ listed: ListedEntry) {
            switch listed.entry {
            case .debris(let kind, let reason):
                contents.debris.append(DebrisEntry(path: listed.path, kind: kind, reason: reason))
            case .dataFile(let name):
                contents.dataFiles.append(DataFileEntry(name: name, bytes: listed.size ?? 0, file: listed.path))
            case .storeRegistration(let store):
                var registration = StoreRegistration(storeIdentifier: store, leechDate: nil, file: listed.path)
                do {
                    var layers: [WrapperLayer]?
                    defer { if let layers { contents.countWrapping(layers, file: listed.path) } }
                    registration.leechDate = try readLeechDate(
                        listing.file(listed.path), store: store, file: listed.path, reader: reader, layers: &layers)
                } catch {
                    contents.problems.append(error)
                }
                contents.stores.append(registration)
            case .event(let name):
                let key = EventGroupKey(globalCount: name.globalCount, store: ExactString(name.storeIdentifier), revision: name.revision)
                eventGroups[key, default: (name, [])].files.append((name.part, listed))
            case .baseline(let name):
                let key = ExactString([String(name.globalCount), name.uniqueIdentifier, name.storePrefix].compactMap { $0 }.joined(separator: "_"))
                baselineGroups[key, default: (name, [])].files.append((name.part, listed))
            }
        }
        // Room for every listed entry at once: grown as found, the groups were hashed again at
        // every doubling (a folder listed with its events holds tens of thousands).
        eventGroups.reserveCapacity(listing.entries.count)
        listing.entries.forEach(take)
        // A folder listed without its events: they are found one by one and indexed in SQLite.
        var indexedEvents: EventFileIndex.Groups?
        var eventFileCount = eventGroups.values.reduce(0) { $0 + $1.files.count }
        if !listing.eventsListed {
            do throws(FormatError) {
                let index = EventFileIndex()
                var failure: FormatError?
                try CloudFolderScanner.forEachEntry(of: .events, in: listing) { listed in
                    guard case .event(let name) = listed.entry else { return take(listed) }
                    do throws(FormatError) {
                        if failure == nil {
                            try index.add(name, listed)
                            eventFileCount += 1
                        }
                    } catch {
                        failure = error
                    }
                }
                if let failure { throw failure }
                indexedEvents = try index.groups()
                // Found in directory order: sorted like a listing would be.
                contents.debris.sort { utf8Precedes($0.path, $1.path) }
            } catch {
                contents.problems.append(
                    error.code == .fileUnreadable
                        ? error : FormatError(error.code, "the index of the event files failed: \(error.message)", location: .init(file: "events")))
            }
        }
        var baselines: [BaselineFileEntry] = []
        // A sink is handed the baselines' numbered bodies too: read again, a large baseline
        // was decoded twice and checked twice before any event was read (Benchmarks/README.md).
        var baselineBodies: [NumberedEvent?] = []
        let bodies = (whole: observe != nil, numbered: sink != nil || observeChanges != nil)
        /// Hands the chunk's readable entries to the observers.
        func observed(_ chunk: borrowing [(some Any, EventEntry, Event?, NumberedEvent?)]) {
            guard observe != nil || observeChanges != nil else { return }
            for index in chunk.indices {
                guard let event = chunk[index].2 ?? chunk[index].1.event else { continue }
                observe?(chunk[index].1.file, event)
                if let observeChanges {
                    observeChanges(chunk[index].1.file, chunk[index].1.event ?? event, chunk[index].3 ?? NumberedEvent(event))
                }
            }
        }
        readGroups(
            Self.supply(baselineGroups), listing: listing, reader: reader, summarize: summarize, bodies: bodies, into: &contents
        ) { chunk in
            observed(chunk)
            for index in chunk.indices {
                var name = chunk[index].0
                name.part = nil
                baselines.append(BaselineFileEntry(name: name, entry: chunk[index].1))
                // Kept for a sink only: without one, nothing would let them go until the folder is read.
                if sink != nil { baselineBodies.append(chunk[index].3.take()) }
            }
        }
        // Moved, not shared: the reading closures' variable kept a second reference, and the
        // sort below then copied the whole list.
        swap(&contents.baselines, &baselines)
        sink?.read(baselines: contents.baselines, bodies: consume baselineBodies)
        var events: [EventFileEntry] = []
        // Grown once (a file count is at least the entries' count): a grown array held its old
        // buffer beside the new one, at the largest entry count the folder has.
        if sink == nil { events.reserveCapacity(eventFileCount) }
        // For a sink, in the order the names give, a global count never split between chunks.
        let order =
            sink == nil
            ? nil : { (a: EventFileName, b: EventFileName) in (a.globalCount, a.storeIdentifier, a.revision) <~ (b.globalCount, b.storeIdentifier, b.revision) }
        var groupFailure: FormatError?
        let eventSupply: () -> (name: EventFileName, files: [(part: PartNumber?, entry: ListedEntry)])?
        if let indexedEvents {
            eventSupply = {
                do throws(FormatError) {
                    return try indexedEvents.next()
                } catch {
                    groupFailure = error
                    return nil
                }
            }
        } else {
            eventSupply = Self.supply(eventGroups, order: order)
            // The supply holds the groups now; a folder of a million events kept both.
            eventGroups = [:]
        }
        readGroups(
            eventSupply, listing: listing, reader: reader, summarize: summarize, bodies: bodies, into: &contents,
            together: { $0.globalCount == $1.globalCount }, intern: sink == nil, progress: ("event files read", eventFileCount), busy: sink?.busy
        ) { chunk in
            observed(chunk)
            var readable: [EventFileEntry] = [], bodies: [NumberedEvent?] = []
            for index in chunk.indices {
                var name = chunk[index].0
                name.part = nil
                let entry = EventFileEntry(name: name, entry: chunk[index].1)
                guard sink != nil, entry.entry.event != nil else {
                    events.append(entry)
                    continue
                }
                readable.append(entry)
                bodies.append(chunk[index].3.take())
            }
            sink?.read(events: readable, bodies: consume bodies)
        }
        swap(&contents.events, &events)
        if let groupFailure {
            contents.problems.append(
                FormatError(groupFailure.code, "the index of the event files failed: \(groupFailure.message)", location: .init(file: "events")))
        }
        // Sorted through their keys, ties kept in reading order: moving the entries themselves
        // (each holds a dozen references) cost a sort of a million-change folder half a second.
        let keys = contents.events.map { ($0.name.globalCount, $0.name.storeIdentifier, $0.name.revision) }
        let sorted = keys.indices.sorted { keys[$0] <~ keys[$1] || (!(keys[$1] <~ keys[$0]) && $0 < $1) }
        contents.events.permute(to: sorted)
        contents.baselines.sort { ($0.name.globalCount, $0.entry.file) <~ ($1.name.globalCount, $1.entry.file) }
        contents.stores.sort { utf8Precedes($0.storeIdentifier, $1.storeIdentifier) }
        // Each pointer's text is made once, not at every comparison (JSONPointer's order).
        contents.unknownKeys = contents.unknownKeys.map { ($0, $0.pointer.description) }.sorted { a, b in
            !exactlyEqual(a.0.file, b.0.file) ? utf8Precedes(a.0.file, b.0.file) : utf8Precedes(a.1, b.1)
        }.map(\.0)
        contents.filesWithUnknownSections.sort(by: utf8Precedes)
        return contents
    }

    /// The files of one event share their name but for the part: its global count, store and
    /// revision (Spec/cloud-layout.md 4.4).
    private struct EventGroupKey: Hashable {
        var globalCount: Int64
        var store: ExactString
        var revision: Int64
    }

    /// The groups of `groups`, one per call, in `order` when one is given, else by their first
    /// file's path; each let go once given. (A dictionary's order changes from run to run: so
    /// did the order of the problems found in a folder read without an order.)
    private static func supply<Key, Name>(
        _ groups: [Key: (name: Name, files: [(part: PartNumber?, entry: ListedEntry)])],
        order: ((Name, Name) -> Bool)? = nil
    ) -> () -> (name: Name, files: [(part: PartNumber?, entry: ListedEntry)])? {
        var all = Array(groups.values)
        if let order {
            all.sort { order($0.name, $1.name) }
        } else {
            let paths = all.map { $0.files.first?.entry.path ?? "" }
            all = paths.indices.sorted { utf8Precedes(paths[$0], paths[$1]) }.map { all[$0] }
        }
        var next = 0
        return {
            guard next < all.count else { return nil }
            let group = all[next]
            all[next].files = []
            next += 1
            return group
        }
    }

    /// Reads every group that forms one event, single-file or multipart, and hands the entries
    /// to `chunk` a chunk at a time.
    ///
    /// With `order`, groups are read in that order, and a chunk ends only between two groups
    /// that are not `together`. Each entry comes, when it was summarized, with its whole event
    /// if `bodies.whole` and its object changes in numbered form if `bodies.numbered` (made on
    /// the reading cores, for a merge's replay or verify's objects step).
    private static func readGroups<Name>(
        _ supply: () -> (name: Name, files: [(part: PartNumber?, entry: ListedEntry)])?,
        listing: EnsembleListing, reader: EventFileReader, summarize: Bool, bodies: (whole: Bool, numbered: Bool),
        into contents: inout EnsembleContents,
        together: (Name, Name) -> Bool = { _, _ in false },
        intern: Bool = true, progress: (step: String, total: Int)? = nil, busy: (@Sendable () -> Bool)? = nil,
        chunk: (inout [(Name, EventEntry, Event?, NumberedEvent?)]) -> Void
    ) {
        var filesRead = 0
        // Single files are numbered as they are decoded (binary ones, and JSON the fast decoder
        // takes), and summarized from their numbers without making their changes; others
        // numbered once joined. (A whole body, or an entry
        // that keeps its event, needs the changes.)
        let reader = {
            var numbering = reader
            numbering.numbersChanges = bodies.numbered && summarize && !bodies.whole
            return numbering
        }()
        // In chunks, so that only one chunk of whole events is in memory when summarizing. Small
        // ones: a sink that applies them while the next are read overlaps best with many small
        // chunks waiting, not a few large ones (the same memory; Benchmarks/README.md).
        var next = supply()
        while next != nil {
            var groups: [(name: Name, files: [(part: PartNumber?, entry: ListedEntry)])] = []
            while let group = next, groups.count < 64 || groups.last.map({ together($0.name, group.name) }) == true {
                groups.append(group)
                next = supply()
            }
            var sets: [(name: Name, count: Int?, files: [Int: ListedEntry])] = []
            for group in groups {
                if let (count, files) = partSet(group.files, into: &contents) { sets.append((group.name, count, files)) }
            }
            // Each set is read, decoded, joined and summarized on whichever core is free.
            let built = ResultSlots<BuiltEntry>(count: sets.count)
            let files = sets.map { (count: $0.count, files: $0.files) }
            filesRead += groups.reduce(0) { $0 + $1.files.count }
            if let progress { ProgressReport.report(progress.step, done: filesRead, total: progress.total) }
            let folder = listing.url.path
            @Sendable func read(_ index: Int) {
                let set = files[index]
                let results = set.files.keys.sorted().compactMap { part in
                    set.files[part].map { listed in
                        reader.readPart(
                            listing.file(listed.path, shownAs: Converter.join(folder, listed.path)),
                            position: set.count.map { .part(index: part, count: $0) } ?? .single,
                            displayName: listed.path)
                    }
                }
                built.set(index, buildEntry(set.files, count: set.count, results: results, summarize: summarize, bodies: bodies))
            }
            // The sets are taken in turn by one worker per core. A worker other than the first
            // that finds the sink busy takes no more of this chunk's sets (the sink's queue only
            // shrinks while a chunk is read), so that the sink's thread shares the cores with
            // one reader, not with all of them (measured: Benchmarks/README.md).
            let next = SharedCounter()
            let busy = busy ?? { false }
            DispatchQueue.concurrentPerform(iterations: Self.cores) { worker in
                while worker == 0 || !busy() {
                    let index = next.add(1)
                    guard index < files.count else { return }
                    read(index)
                }
            }
            var result: [(Name, EventEntry, Event?, NumberedEvent?)] = []
            // Each entry moved out of the slots, not copied: a copy of an entry retains and
            // releases every string and list of its event, and there is one per file.
            var entries = built.takeValues()
            for (set, index) in zip(sets, entries.indices) {
                guard var entry = entries[index].take() else { continue }
                contents.problems += entry.problems
                for (file, layers) in entry.layerFiles { contents.countWrapping(layers, file: file) }
                contents.unknownKeys += entry.unknownKeys
                contents.filesWithUnknownSections += entry.filesWithUnknownSections
                // Thousands of kept summaries name the same few stores and model versions: one
                // copy each. (Streamed summaries are not kept, so they are left as they are.)
                if var summary = entry.entry.summary, intern {
                    summary.event.storeIdentifier = contents.interned(summary.event.storeIdentifier)
                    summary.event.modelVersion = summary.event.modelVersion.map { contents.interned($0) }
                    summary.event.revisionSet = RevisionSet(pairs: summary.event.revisionSet.revisions.map { (contents.interned($0.store), $0.revision) })
                    entry.entry.summary = summary
                    // The whole event takes the same copies: a reader that keeps its header then
                    // holds no second revision set of its own.
                    entry.body?.storeIdentifier = summary.event.storeIdentifier
                    entry.body?.modelVersion = summary.event.modelVersion
                    entry.body?.revisionSet = summary.event.revisionSet
                }
                result.append((set.name, entry.entry, entry.body.take(), entry.numberedBody.take()))
            }
            // Handed over to be moved out of, not copied: each copy of an event's numbered body
            // retained and released its dozen lists, and the sink's chain made five.
            chunk(&result)
        }
    }

    /// One event's entry from its decoded files, with the problems and unknown keys found.
    private struct BuiltEntry: Sendable {
        var entry: EventEntry
        /// The whole event, when `entry` holds only its summary and it was asked for.
        var body: Event?
        /// Its object changes in numbered form, when `entry` holds only its summary and they were
        /// asked for.
        var numberedBody: NumberedEvent?
        var problems: [FormatError] = []
        var unknownKeys: [UnknownKey] = []
        var filesWithUnknownSections: [String] = []
        /// Each file's layers, for ``EnsembleContents/wrapping``.
        var layerFiles: [(file: String, layers: [WrapperLayer])] = []
    }

    /// Builds one event's entry from its decoded files (in part order), summarized when asked.
    private static func buildEntry(
        _ files: [Int: ListedEntry], count: Int?, results: consuming [EventFileReader.PartResult], summarize: Bool, bodies: (whole: Bool, numbered: Bool)
    ) -> BuiltEntry {
        // The results are read in place and their parts moved out: a copy of a result retains
        // and releases every string and list of its event, once per file.
        var results = results
        let indices = files.keys.sorted()
        let first = files[indices.first ?? 1]
        var parts: [EventPart] = []
        var digests: [UInt64] = []
        var readable = true
        var built = BuiltEntry(
            entry: EventEntry(
                file: first?.path ?? "", files: files.mapValues(\.path),
                bytes: files.values.reduce(0) { $0 + ($1.size ?? 0) }, partCount: count, event: nil))
        for (index, position) in zip(indices, results.indices) {
            guard let listed = files[index] else { continue }
            built.problems += results[position].errors
            if let layers = results[position].layers {
                if built.layerFiles.isEmpty { built.entry.layers = layers }
                built.layerFiles.append((listed.path, layers))
            }
            if let digest = results[position].digest { digests.append(digest) }
            if let part = results[position].part.take() {
                built.unknownKeys += part.unknownKeys.map { UnknownKey(file: listed.path, pointer: $0) }
                if !results[position].unknownSectionOffsets.isEmpty { built.filesWithUnknownSections.append(listed.path) }
                parts.append(part)
            } else {
                readable = false
            }
        }
        guard readable && built.entry.isComplete, let event = try? V2JSONDecoder.join(parts) else { return built }
        built.entry.event = event
        built.entry.digest = EventFileReader.combinedDigest(digests)
        if summarize {
            // A single file read with `numbersChanges` may hold its changes in numbered form only.
            let numbered = results.count == 1 ? results[0].numbered.take() : nil
            var summary =
                numbered.map { SourcedEvent(header: event, changes: $0, file: built.entry.file, parts: built.entry.partFiles) }
                ?? SourcedEvent(event: event, file: built.entry.file, parts: built.entry.partFiles).summary()
            summary.contentDigest = built.entry.digest
            built.entry.summary = summary
            if bodies.whole { built.body = event }
            if bodies.numbered { built.numberedBody = numbered ?? NumberedEvent(event) }
        }
        return built
    }

    /// A group of one base name as a single file (count nil) or one multipart set, keyed by
    /// part index; nil, with `v2.duplicate-part` for each file, when it is neither
    /// (Spec/cloud-layout.md section 4.4).
    private static func partSet(
        _ files: [(part: PartNumber?, entry: ListedEntry)],
        into contents: inout EnsembleContents
    ) -> (Int?, [Int: ListedEntry])? {
        let counts = Set(files.map { $0.part?.count ?? 0 })
        if files.count == 1, files[0].part == nil { return (nil, [1: files[0].entry]) }
        if counts.count == 1, let count = counts.first, count > 0 {
            return (count, Dictionary(files.compactMap { file in file.part.map { ($0.index, file.entry) } }, uniquingKeysWith: { first, _ in first }))
        }
        let names = files.map(\.entry.path).sorted(by: utf8Precedes)
        for file in files {
            contents.problems.append(
                FormatError(
                    .v2DuplicatePart,
                    "the files \(names.joined(separator: ", ")) share a base name but do not form one event (a whole file beside parts, or parts of different counts)",
                    location: .init(file: file.entry.path)))
        }
        return nil
    }

    /// Counts one file's layers in ``wrapping``.
    mutating func countWrapping(_ layers: [WrapperLayer], file: String) {
        // In place: a copy taken out of the dictionary would copy its examples at each file.
        wrapping[layers, default: WrappingCount()].add(file)
    }

    /// Reads a registration file (Spec/cloud-layout.md section 5) and returns its leech date,
    /// with the wrappers its content was in (Spec/wrappers.md 5).
    static func readLeechDate(
        _ source: FileReference, store: String, file: String, reader: EventFileReader, layers: inout [WrapperLayer]?
    ) throws(FormatError) -> Date {
        var bytes: [UInt8]
        do {
            bytes = try EventFileReader.readBytes(source, limit: 1024 * 1024)
        } catch {
            throw error.inFile(file)
        }
        layers = nil
        var unwrapper = reader.unwrapper
        unwrapper.maximumBytes = 1024 * 1024
        do throws(FormatError) {
            let unwrapped = try unwrapper.unwrap(bytes)
            bytes = unwrapped.bytes
            layers = unwrapped.layers
        } catch {
            throw error.inFile(file)
        }
        if let problem = BinaryPropertyListShape.problem(bytes) {
            throw FormatError(.storeInvalid, problem, location: .init(file: file))
        }
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        } catch {
            throw FormatError(.storeInvalid, "not a property list: \(error.localizedDescription)", location: .init(file: file))
        }
        guard let dictionary = plist as? [String: Any] else {
            throw FormatError(.storeInvalid, "the property list is not a dictionary", location: .init(file: file))
        }
        guard let identifier = dictionary["storeIdentifier"] as? String else {
            throw FormatError(.storeInvalid, "the property list has no string \"storeIdentifier\"", location: .init(file: file))
        }
        guard identifier.utf8.elementsEqual(store.utf8) else {
            throw FormatError(.storeInvalid, "the file is named \"\(store)\" but registers the store \"\(identifier)\"", location: .init(file: file))
        }
        guard let leechDate = dictionary["leechDate"] as? Date else {
            throw FormatError(.storeInvalid, "the property list has no date \"leechDate\"", location: .init(file: file))
        }
        return leechDate
    }
}

extension FormatError.Code {
    public static let storeInvalid = Self("store.invalid-registration")
    public static let v2DuplicatePart = Self("v2.duplicate-part")
}

infix operator <~ : ComparisonPrecedence

/// Tuple order with strings compared by UTF-8 bytes. (Strings told apart by their bytes: Swift's
/// `!=` calls canonically equivalent spellings equal, and two stores named in NFC and NFD then
/// tied, their events handed over in a dictionary's order.)
func <~ (lhs: (Int64, String, Int64), rhs: (Int64, String, Int64)) -> Bool {
    if lhs.0 != rhs.0 { return lhs.0 < rhs.0 }
    if !exactlyEqual(lhs.1, rhs.1) { return utf8Precedes(lhs.1, rhs.1) }
    return lhs.2 < rhs.2
}

func <~ (lhs: (Int64, String), rhs: (Int64, String)) -> Bool {
    lhs.0 != rhs.0 ? lhs.0 < rhs.0 : utf8Precedes(lhs.1, rhs.1)
}

extension Array {
    /// Reorders the array in place so that element `i` is the one that was at `order[i]`
    /// (`order` a permutation of the indices): by swaps along the permutation's cycles, fewer
    /// swaps than elements. A reordered copy held a second array of a million large entries at
    /// the peak of a folder's reading, and a sort of the entries themselves moved each of them
    /// about log n times.
    mutating func permute(to order: [Int]) {
        var order = order
        for start in indices where order[start] != start {
            var position = start
            while order[position] != start {
                let next = order[position]
                swapAt(position, next)
                order[position] = position
                position = next
            }
            order[position] = position
        }
    }
}
