import Foundation
import Crypto
import JSONDocument
import EnsembleModel
import EventCodecs
import MergeEngine
import CloudFolder
import FileWrappers

extension FormatError.Code {
    /// `--out`'s parent folder is missing, or the new folder would be the input or inside it
    /// (Spec/merge.md 13.8).
    public static let rebaseInvalidDestination = Self("rebase.invalid-destination")
    /// The store asked to own the new baseline is not in its revision set (Spec/merge.md 13.4).
    public static let rebaseUnknownStore = Self("rebase.unknown-store")
}

/// What a rebase did (Spec/merge.md 13.8).
public struct RebaseSummary: Sendable, Hashable {
    /// The new baseline, relative to the new folder; nil when there was nothing to fold.
    public var baseline: String?
    public var cutoffGlobalCount: Int64?
    public var foldedEvents: Int
    public var keptEvents: Int
    public var liveObjects: Int
    public var written: Bool { baseline != nil }
}

extension Ensemble {
    /// Folds the first input's history into one new baseline and writes a new folder at `out`
    /// (which must not exist) that merges to exactly the same state; the input is never
    /// changed, and nothing is published unless both merge alike (Spec/merge.md 13).
    /// With `replacing`, an existing `out` is replaced once the new folder is verified.
    public func rebase(to out: URL, store: String? = nil, binary: Bool = false, replacing: Bool = false) throws(EnsembleError) -> RebaseSummary {
        let path = try firstInput()
        let outURL = out.standardizedFileURL
        do {
            try Converter.checkDestination(out.path, replacing: replacing, existsCode: .rebaseDestinationExists)
            try Converter.checkOutside(out.path, source: path, code: .rebaseInvalidDestination)
        } catch {
            throw EnsembleError(usage: error.errors, path: out.path)
        }
        let reader = try reader()
        var warnings: [FormatError] = []
        var folderLayers: [WrapperLayer] = []
        var listed: EnsembleListing?
        // One scan: the listing the reader took (registrations and data files) is the one copied.
        // The events the rebase folds are applied as they are read (EarlyReplay's folding bet),
        // so that each is decoded once, as a merge decodes it.
        let input = try MergeInputs.gather(
            [path], reader: reader, summarize: true, replayEarly: .folding, modelVersions: options.modelVersions, warnings: &warnings,
            foldersOnly: true,
            severalEnsembles: { "\($0) holds more than one ensemble; rebase one at a time" },
            contentsRead: { listing, contents, _ in
                listed = listing
                folderLayers = contents.folderLayers ?? []
            })
        guard let listing = listed else {
            throw EnsembleError(.failure, FormatError(.rebaseWriteFailed, "\(path) was read without a folder listing"))
        }
        let analysis = MergeEngine.analyze(input)
        guard analysis.problems.isEmpty else { throw EnsembleError(kind: .integrity, problems: analysis.problems) }
        let plan: RebasePlan?
        do {
            plan = try RebasePlan(analysis)
        } catch {
            throw EnsembleError(.integrity, error)
        }
        guard let plan, let lastFoldedStore = plan.lastFoldedStore else {
            var state = StoreState(model: input.model)
            try Self.replay(analysis.baselines, into: &state, input)
            return RebaseSummary(baseline: nil, cutoffGlobalCount: nil, foldedEvents: 0, keptEvents: 0, liveObjects: state.liveObjectCount)
        }
        let owner = store ?? lastFoldedStore
        guard plan.revisionSet[owner] != nil else {
            throw EnsembleError(
                .usage,
                FormatError(
                    .rebaseUnknownStore, "--store \(owner) is not in the new baseline's revision set (\(plan.revisionSet.stores.joined(separator: ", ")))"))
        }
        var state: StoreState
        if let folded = input.earlyReplay?.foldedState(for: analysis, plan: plan) {
            state = folded
        } else {
            // The bet was lost: the folded events are read again from their files.
            state = StoreState(model: input.model)
            try Self.replay(analysis.baselines, into: &state, input)
            do {
                try plan.forEachFoldedPage { page in try Self.replay(page, into: &state, input) }
            } catch let error as EnsembleError {
                throw error
            } catch {
                throw EnsembleError(.failure, (error as? FormatError) ?? FormatError(.mergeEventStore, "\(error)"))
            }
        }
        let header = Event(
            uniqueIdentifier: BaselineNaming.uniqueIdentifier(for: plan.revisionSet), type: .baseline, storeIdentifier: owner, globalCount: plan.cutoff,
            timestamp: (analysis.baselines.map(\.event.timestamp) + [plan.foldedTimestamp].compactMap { $0 }).max() ?? 0,
            modelVersion: input.modelHash ?? plan.foldedModelVersion ?? analysis.baselines.last(where: { $0.event.modelVersion != nil })?.event.modelVersion,
            revisionSet: plan.revisionSet, objectChanges: [])
        let name = BaselineNaming.fileName(globalCount: plan.cutoff, uniqueIdentifier: header.uniqueIdentifier, store: owner)
        let liveObjects = state.liveObjectCount
        // The baseline's changes (13.4), made from S_C as they are written: handed to the
        // writer, which lets them go once the baseline is written.
        var changes: ChangeRuns? = state.baselineChanges()
        // What the check of the new folder compares with (merge.md 13.7): the state document of
        // S_C, and the input's merged state, which is the kept events replayed on top of S_C (the
        // rest of the input's replay, so the input is not merged again from the start). Only
        // their digests are kept, and not the states: the check builds its own from the
        // baseline read back. They are worked out on another thread, started once the baseline
        // is written (until then its changes are made from S_C, which that thread's replay would
        // copy), while this one copies the kept files and reads the baseline back; that thread
        // then lets the state go (measured: Benchmarks/README.md).
        let expected = RebaseWriter.Pending(consume state) { (state) throws(EnsembleError) -> RebaseWriter.Expected in
            do {
                let folded = try RebaseWriter.documentDigest(state)
                let merged = try RebaseWriter.mergedDigest(&state, folded: folded, kept: plan.kept) { try Self.replay(plan.kept, into: &$0, input) }
                return RebaseWriter.Expected(folded: folded, merged: merged)
            } catch let error as EnsembleError {
                throw error
            } catch {
                throw EnsembleError(.failure, (error as? FormatError) ?? FormatError(.rebaseWriteFailed, "\(error)"))
            }
        }
        let inside = listing.displayPath == "." ? "" : listing.displayPath + "/"
        do {
            try RebaseWriter(path: path, binary: binary, replacing: replacing, reader: reader)
                .write(
                    header, changes: &changes, named: name, plan: plan, listing: listing, input: input, expected: expected, folderLayers: folderLayers,
                    to: outURL)
        } catch let failure as ConversionFailure {
            let problems = failure.errors.map { problem in
                let code: FormatError.Code =
                    switch problem.code {
                    case .rebaseVerificationFailed, .rebaseDestinationExists: problem.code
                    case .convertDestinationExists: .rebaseDestinationExists
                    default: .rebaseWriteFailed
                    }
                return IntegrityProblem(code: code, number: nil, files: problem.location.file.map { [$0] } ?? [], message: problem.message)
            }
            throw EnsembleError(kind: failure.usage ? .usage : .failure, problems: problems)
        } catch let error as EnsembleError {
            throw error
        } catch {
            throw EnsembleError(.failure, FormatError(.rebaseWriteFailed, "\(error)"))
        }
        return RebaseSummary(
            baseline: inside + "baselines/" + name, cutoffGlobalCount: plan.cutoff, foldedEvents: plan.foldedCount,
            keptEvents: plan.kept.count, liveObjects: liveObjects)
    }

    private static func replay(_ events: [SourcedEvent], into state: inout StoreState, _ input: MergeInput) throws(EnsembleError) {
        do {
            try MergeEngine.replay(events, into: &state, input)
        } catch {
            throw EnsembleError(kind: .integrity, problems: error.problems)
        }
    }
}

/// Faults a test injects into the rebase that writes a given folder, to see the checks of
/// Spec/merge.md 13.7 catch them: a change to the baseline's header and to each piece of its
/// object changes before they are written, and a change to the staged ensemble folder once it
/// is written, before it is checked.
package enum RebaseFaults {
    package struct Fault: Sendable {
        package var header: (@Sendable (inout Event) -> Void)?
        package var changes: (@Sendable (inout [ObjectChange]) -> Void)?
        package var staged: (@Sendable (URL) -> Void)?

        package init(
            header: (@Sendable (inout Event) -> Void)? = nil, changes: (@Sendable (inout [ObjectChange]) -> Void)? = nil,
            staged: (@Sendable (URL) -> Void)? = nil
        ) {
            self.header = header
            self.changes = changes
            self.staged = staged
        }
    }

    private final class Registry: @unchecked Sendable {
        let lock = NSLock()
        var faults: [String: Fault] = [:]
    }

    private static let registry = Registry()

    /// Sets (or, with nil, removes) the fault of the rebase whose `--out` is `out`.
    package static func set(_ fault: Fault?, for out: URL) {
        registry.lock.lock()
        registry.faults[out.standardizedFileURL.path] = fault
        registry.lock.unlock()
    }

    static func fault(for out: URL) -> Fault? {
        registry.lock.lock()
        defer { registry.lock.unlock() }
        return registry.faults.isEmpty ? nil : registry.faults[out.standardizedFileURL.path]
    }
}

/// Stages the new folder, checks it (Spec/merge.md 13.7: the baseline read back once, applied to
/// an empty state as a merge applies it, and the kept events replayed on top give the input's
/// states), and publishes it.
private struct RebaseWriter {
    /// The state documents the new folder must give (Spec/merge.md 13.7 step 5), as SHA-256
    /// digests: a large state's document is never held.
    struct Expected {
        /// The state document of S_C, the state after the baselines and the folded events.
        var folded: [UInt8]
        /// The state document of the input's merge.
        var merged: [UInt8]
    }

    /// The ``Expected`` digests of a state, worked out on another thread from ``start()`` on,
    /// which then frees the state; ``get()`` waits for them (and fails at once without a start).
    final class Pending: @unchecked Sendable {
        private let done = DispatchGroup()
        /// Taken out (so that changing it copies nothing) by the other thread alone.
        private var state: StoreState?
        /// Set once, before `done` is left; read only after waiting for it.
        private var result: Result<Expected, EnsembleError> = .failure(EnsembleError(.failure, FormatError(.rebaseWriteFailed, "no digests")))

        private let work: @Sendable (inout StoreState) throws(EnsembleError) -> Expected

        init(_ state: consuming StoreState, _ work: @escaping @Sendable (inout StoreState) throws(EnsembleError) -> Expected) {
            self.state = state
            self.work = work
        }

        func start() {
            done.enter()
            DispatchQueue.global().async { [self] in
                guard var state = self.state.take() else { return done.leave() }
                result = Result { () throws(EnsembleError) in try work(&state) }
                // The result is given before the state is freed, which the checking thread
                // would otherwise wait for (measured: Benchmarks/README.md).
                withExtendedLifetime(state) { done.leave() }
            }
        }

        func get() throws(EnsembleError) -> Expected {
            done.wait()
            return try result.get()
        }
    }

    /// The digest of the state document once `replay` has replayed the `kept` events on `state`,
    /// whose document's digest is `folded`. Without kept events that state is `state` itself
    /// (Spec/merge.md 13.7 step 5), and its document is not written a second time.
    static func mergedDigest(
        _ state: inout StoreState, folded: [UInt8], kept: [SourcedEvent], replay: (inout StoreState) throws -> Void
    ) throws -> [UInt8] {
        guard !kept.isEmpty else { return folded }
        try replay(&state)
        return try documentDigest(state)
    }

    /// The SHA-256 of the state document of `state`, written in pieces.
    static func documentDigest(_ state: StoreState) throws(FormatError) -> [UInt8] {
        var hasher = SHA256()
        try state.writeDocument { hasher.update(data: $0) }
        return Array(hasher.finalize())
    }

    var path: String
    var binary: Bool
    var replacing: Bool
    var reader: EventFileReader

    func write(
        _ header: Event, changes: inout ChangeRuns?, named name: String, plan: RebasePlan, listing: EnsembleListing, input: MergeInput,
        expected: Pending, folderLayers: [WrapperLayer], to outURL: URL
    ) throws {
        let fault = RebaseFaults.fault(for: outURL)
        var staging = try StagingArea(for: outURL)
        staging.replacing = replacing
        defer { staging.discard() }
        let ensemble = listing.displayPath == "." ? staging.url : staging.url.appendingPathComponent(listing.displayPath)
        for folder in EnsembleSubfolder.allCases { try StagingArea.createFolder(ensemble.appendingPathComponent(folder.rawValue)) }
        let baselineURL = ensemble.appendingPathComponent("baselines/\(name)")
        // Once the changes are made, the state they were made from is the expected digests' alone.
        let baseline = try writeBaseline(header, changes: &changes, to: baselineURL, fault: fault, made: expected.start)
        var dataFiles = baseline.dataFiles
        // Every copy of a kept event (an event delivered twice has two files), and its data files.
        let keptRevisions = Set(plan.kept.map { StoreRevision($0.event.storeIdentifier, $0.event.revision) })
        let base = listing.displayPath == "." ? path : Converter.join(path, listing.displayPath)
        var copies: [String] = []
        // Copies of a kept event claim the same revision, so they have its global count, above the cutoff.
        for sourced in try input.eventStore?.events(globalCountAbove: plan.cutoff) ?? input.events
        where keptRevisions.contains(StoreRevision(sourced.event.storeIdentifier, sourced.event.revision)) {
            copies += (sourced.parts.isEmpty ? [sourced.file] : sourced.parts).map { String(String($0.dropFirst(base.count)).trimmingPrefix("/")) }
            dataFiles.formUnion(sourced.dataFileReferences.map(ExactString.init))
        }
        for entry in listing.entries {
            switch entry.entry {
            case .storeRegistration: copies.append(entry.path)
            case .dataFile(let file) where dataFiles.contains(ExactString(file)): copies.append(entry.path)
            default: break
            }
        }
        for relative in copies {
            // A file of a duplicate folder goes where a device folds it in; a data file of a
            // partition folder goes directly into data/ (Spec/cloud-layout.md 6.1).
            let folded = Self.unpartitioned(listing.foldedPath(relative))
            let source = listing.file(relative)
            guard let content = try plainContent(of: source, at: folded, folderLayers: folderLayers) else {
                let digest = try StagingArea.copy(source, to: ensemble.appendingPathComponent(folded))
                guard (try? DataFileReader.digest(of: ensemble.appendingPathComponent(folded))) == digest else {
                    throw ConversionFailure(errors: [FormatError(.rebaseVerificationFailed, "\(relative) does not read back as the bytes copied")])
                }
                continue
            }
            // Written plain, so named without wrapper suffixes (Spec/wrappers.md 5.3).
            let destination = ensemble.appendingPathComponent(Self.plainName(folded))
            try StagingArea.write(content, to: destination)
            guard (try? EventFileReader.readBytes(at: destination, limit: content.count + 1)) == content else {
                throw ConversionFailure(errors: [FormatError(.rebaseVerificationFailed, "\(relative) does not read back as its content")])
            }
        }
        fault?.staged?(ensemble)
        try check(
            baselineURL, digest: baseline.digest, header: EventHeader(of: header), inserts: baseline.inserts, dataFiles: baseline.dataFiles, plan: plan,
            input: input, expected: expected)
        try staging.commit()
    }

    /// Writes the baseline `header` with the changes `made` as they are made (and lets them go,
    /// then calls `madeAll`), and returns the SHA-256 of its bytes (merge.md 13.7 step 3), its
    /// number of inserts and the data files it names: those of the changes as made, before a
    /// test's fault changes them.
    private func writeBaseline(
        _ header: Event, changes made: inout ChangeRuns?, to url: URL, fault: RebaseFaults.Fault?, made madeAll: () -> Void
    ) throws -> (digest: [UInt8], inserts: Int, dataFiles: Set<ExactString>) {
        guard var changes = made.take() else { throw ConversionFailure(errors: [FormatError(.rebaseWriteFailed, "there is no baseline to write")]) }
        let count = changes.count
        var written = header
        fault?.header?(&written)
        let referenced = DataFileNames()
        changes.changes = { [make = changes.changes] positions in
            var changes = make(positions)
            referenced.insert(SourcedEvent.dataFileReferences(of: changes))
            fault?.changes?(&changes)
            return changes
        }
        // The changes let go (the closures hold a copy of the state), then the state handed on.
        func letGo() {
            changes = ChangeRuns(entities: []) { _ in [] }
            madeAll()
        }
        let digest: [UInt8]
        if binary {
            // The binary encoder's string table needs every change before the first is written:
            // they are made at once, as numbers, unless a test's fault changes them as made.
            let numbered: NumberedEvent
            if let make = changes.numbered, fault?.changes == nil {
                numbered = make()
                referenced.insert(numbered.dataFiles.map { numbered.string($0) })
            } else {
                var event = written
                event.objectChanges = changes.all()
                numbered = NumberedEvent(event)
            }
            // Before it is encoded: the state can go to the expected digests' thread.
            letGo()
            let bytes = try V2BinaryEncoder().encode(header: written, numbered: numbered)
            digest = try StagingArea.write(to: url) { (emit) throws(FormatError) in try emit(bytes) }
        } else {
            digest = try StagingArea.write(to: url) { (emit) throws(FormatError) in try V2JSONEncoder().encode(header: written, changes: changes, emit: emit) }
            letGo()
        }
        return (digest, count, referenced.names)
    }

    /// The data files that the changes made so far name; the threads making them add to it.
    private final class DataFileNames: @unchecked Sendable {
        private let lock = NSLock()
        /// By bytes: data files named in NFC and NFD are two files; only those named are copied.
        private var set: Set<ExactString> = []

        func insert(_ names: [String]) {
            guard !names.isEmpty else { return }
            lock.lock()
            set.formUnion(names.map(ExactString.init))
            lock.unlock()
        }

        var names: Set<ExactString> {
            lock.lock()
            defer { lock.unlock() }
            return set
        }
    }

    /// Steps 4 and 5 of Spec/merge.md 13.7 for the baseline: its bytes are the ones written, and
    /// read back once through its reading pipeline it is the event of 13.4 as far as a merge of
    /// the new folder sees it; applied to an empty state it gives S_C, and with the kept events
    /// replayed on top, in the order they have in both folders, the input's merged state.
    private func check(
        _ baselineURL: URL, digest: [UInt8], header: EventHeader, inserts: Int, dataFiles: Set<ExactString>, plan: RebasePlan, input: MergeInput,
        expected: Pending
    ) throws {
        func failed(_ message: String) -> ConversionFailure { ConversionFailure(errors: [FormatError(.rebaseVerificationFailed, message)]) }
        // Read once: its bytes are hashed, then decoded as a merge decodes them, the changes
        // straight into numbers when the file allows it (a large baseline's `Event` cost more
        // time and memory than the rest of the check).
        let bytes: [UInt8]
        do {
            bytes = try EventFileReader.readBytes(at: baselineURL, limit: reader.jsonOptions.maximumBytes)
        } catch {
            throw failed("the new baseline does not read back: \(error.message)")
        }
        guard Array(SHA256.hash(data: bytes)) == digest else { throw failed("the new baseline does not read back as the bytes written") }
        var numbering = reader
        numbering.numbersChanges = true
        let result = numbering.decodePart(consume bytes, position: .single, displayName: baselineURL.lastPathComponent)
        guard result.errors.isEmpty, let part = result.part, let read = try? V2JSONDecoder.join([part]) else {
            throw failed("the new baseline does not read back as an event")
        }
        let changes = result.numbered ?? NumberedEvent(read)
        guard EventHeader(of: read) == header, read.unknownFields.isEmpty, part.unknownKeys.isEmpty, result.unknownSectionOffsets.isEmpty,
            read.objectChanges.allSatisfy({ $0.unknownFields.isEmpty && $0.propertyChanges.allSatisfy(\.unknownFields.isEmpty) }),
            changes.changes.count == inserts, changes.changes.allSatisfy({ $0.type == .insert }),
            Set(SourcedEvent(header: read, changes: changes, file: baselineURL.lastPathComponent).dataFileReferences.map(ExactString.init)) == dataFiles
        else {
            throw failed("the new baseline does not read back as the event written")
        }
        // In the new folder the read-back baseline is the only one and its revision set is the
        // plan's, which covers no kept event (13.3 step 5); the kept events replay in the order of
        // section 6, which depends on the events alone: the input's order must be that order.
        for (earlier, later) in zip(plan.kept, plan.kept.dropFirst()) where !MergeAnalysis.replayPrecedes(earlier.event, later.event) {
            throw failed("the kept events \(earlier.file) and \(later.file) are not in replay order")
        }
        var state = StoreState(model: input.model)
        state.apply(consume changes)
        do {
            let folded = try Self.documentDigest(state)
            guard try folded == expected.get().folded else {
                throw failed("the new baseline applied to an empty state does not give the state it was written from; nothing was written")
            }
            let merged = try Self.mergedDigest(&state, folded: folded, kept: plan.kept) { state in
                do throws(MergeFailure) {
                    try MergeEngine.replay(plan.kept, into: &state, input)
                } catch {
                    throw failed("a merge for the verification failed: \(error.problems.map(\.message).joined(separator: "; "))")
                }
            }
            guard try merged == expected.get().merged else {
                throw failed("the new folder merges to another state than \(path); nothing was written")
            }
            // Freed on another thread (the only reference moved there): the rebase is done with
            // it, and need not wait for it.
            let checked = consume state
            DispatchQueue.global().async { withExtendedLifetime(checked) {} }
        } catch let error as FormatError {
            throw ConversionFailure(errors: [error])
        }
    }

    /// `data/NAME` for a data file at `data/XY/NAME`; any other path as it is.
    static func unpartitioned(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 3 && parts[0] == "data" ? "data/" + parts[2] : path
    }

    /// The content of a kept file inside its wrappers, or nil when it has none (then it is copied
    /// byte for byte, in chunks): the new folder is plain throughout, like every folder the
    /// toolkit writes without `--zip`/`--encrypt` (Spec/wrappers.md 8). Events and registrations
    /// are unwrapped by their content; a data file loses exactly the layers of the folder's other
    /// files, when it has them (its own content may look like a wrapper, Spec/wrappers.md 1).
    private func plainContent(of source: FileReference, at path: String, folderLayers: [WrapperLayer]) throws -> [UInt8]? {
        do throws(FormatError) {
            if path.hasPrefix("data/") {
                guard !folderLayers.isEmpty else { return nil }
                var unwrapper = reader.unwrapper
                unwrapper.maximumBytes = DataBlob.maximumContainerBytes
                return try unwrapper.remove(
                    exactly: folderLayers, from: try EventFileReader.readBytes(source, limit: DataBlob.maximumContainerBytes + 65_536))
            }
            let limit = path.hasPrefix("stores/") ? 1024 * 1024 : reader.jsonOptions.maximumBytes
            var unwrapper = reader.unwrapper
            unwrapper.maximumBytes = limit
            let unwrapped = try unwrapper.unwrap(try EventFileReader.readBytes(source, limit: limit))
            return unwrapped.layers.isEmpty ? nil : unwrapped.bytes
        } catch {
            throw ConversionFailure(errors: [FormatError(.rebaseWriteFailed, "\(path) could not be unwrapped: \(error)")])
        }
    }

    /// `events/` and `baselines/` names without their wrapper suffixes; other names as they are.
    static func plainName(_ path: String) -> String {
        guard path.hasPrefix("events/") || path.hasPrefix("baselines/") else { return path }
        return CloudFileName.strippingWrapperSuffixes(path)
    }
}
