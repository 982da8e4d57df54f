import Foundation
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import MergeEngine
import CloudFolder
import FileWrappers

/// What a library user starts from: one ensemble's files (a cloud folder, event files, v1
/// logs), and the operations the toolkit offers on them. Nothing here writes into the inputs.
///
/// ```swift
/// let ensemble = Ensemble(at: URL(fileURLWithPath: "cloud/MainStore"))
/// let state = try ensemble.merge()
/// print(String(decoding: try state.documentBytes(), as: UTF8.self))
/// ```
public struct Ensemble: Sendable {
    /// How the inputs are read.
    public struct Options: Sendable {
        /// The app's data model: needed for v1 files; when given, v2 events are checked against
        /// it, related identifiers resolve in destination entities and inverses are kept
        /// (Spec/merge.md 2, 8.8).
        public var model: DataModel?
        /// Accept the trailing commas of the original 1.x logs (Spec/v1-json.md 2.1).
        public var lenient: Bool
        /// Model versions known besides ``model``'s own hash: from compiled models and Core Data
        /// stores; events naming none of them are error 204 (Spec/merge.md 5.7). Added with
        /// ``addModelVersion(fromCoreDataStore:)`` and ``addModelVersions(fromCompiledModel:version:)``.
        package var modelVersions: ModelVersionCatalog? = nil
        /// The password of an encrypted folder (Spec/wrappers.md 5.4); nil: encrypted files are
        /// `wrap.password-required`. It is checked once, before any file is read through its
        /// layers (5.5): a wrong one stops every operation with one `wrap.bad-password`, an
        /// ``EnsembleError/Kind/usage`` error.
        public var password: PasswordSource? = nil

        public init(model: DataModel? = nil, lenient: Bool = false) {
            self.model = model
            self.lenient = lenient
        }
    }

    /// The paths as given; findings name files by them (Spec/merge.md 5.9).
    public var inputs: [String]
    public var options: Options

    /// One cloud folder, ensemble folder or event file.
    public init(at url: URL, options: Options = Options()) {
        self.init(inputs: [url.path], options: options)
    }

    /// Several inputs pooled into one history (Spec/merge.md 2): at most one ensemble folder,
    /// and any number of event files and logs.
    public init(inputs: [String], options: Options = Options()) {
        self.inputs = inputs
        self.options = options
    }

    /// The reader of every operation, once the password is checked (Spec/wrappers.md 5.5): a
    /// wrong password stops the operation with one `wrap.bad-password`, a usage error, before
    /// any file is read through its layers. The check is made once per ``Options/password``.
    func reader() throws(EnsembleError) -> EventFileReader {
        let reader = EventFileReader(lenient: options.lenient, model: options.model, password: options.password)
        if let password = options.password {
            do {
                try PasswordCheck.run(password, inputs: inputs, limit: reader.jsonOptions.maximumBytes)
            } catch {
                var failure = EnsembleError(.usage, error)
                failure.readErrors = [error]
                throw failure
            }
        }
        return reader
    }

    /// The ensemble folders of the first input; a path that is not a cloud folder is a usage
    /// error.
    func listings() throws(EnsembleError) -> [EnsembleListing] {
        let path = try firstInput()
        do {
            return try CloudFolderScanner().scan(path)
        } catch {
            throw EnsembleError(.usage, error)
        }
    }

    /// The input an operation on one path works on: the first one.
    func firstInput() throws(EnsembleError) -> String {
        guard let path = inputs.first else { throw EnsembleError(.usage, FormatError(.folderNotFound, "no input given")) }
        return path
    }

    /// Replays every event to the final state (Spec/merge.md). Warnings that do not stop the
    /// merge (an invalid store registration) go to `warnings`.
    public func merge(warnings: inout [FormatError]) throws(EnsembleError) -> StoreState {
        try merge(warnings: &warnings, whileChecking: nil).state
    }

    /// ``merge(warnings:)``. With `whileChecking`, a folder's state replayed as it was read is
    /// handed over before the integrity checks decide whether it is the merge's, so that writing
    /// it can overlap them; `isReplayedState` says whether the state returned is the one handed
    /// over (otherwise, discard what was made of it).
    public func merge(
        warnings: inout [FormatError], whileChecking: ((StoreState) -> Void)?
    ) throws(EnsembleError) -> (state: StoreState, isReplayedState: Bool) {
        let input = try MergeInputs.gather(
            inputs, reader: try reader(), summarize: true, replayEarly: .everything, modelVersions: options.modelVersions, warnings: &warnings)
        warnings += Self.modelWarning(input)
        do {
            return try MergeEngine.merge(input, whileChecking: whileChecking)
        } catch {
            throw EnsembleError(kind: .integrity, problems: error.problems)
        }
    }

    /// Replays every event to the final state (Spec/merge.md), ignoring warnings.
    public func merge() throws(EnsembleError) -> StoreState {
        var warnings: [FormatError] = []
        return try merge(warnings: &warnings)
    }

    /// The folder as device `store` sees it (Spec/merge.md 15): the events it integrates and the
    /// state it reaches, the events it holds back and why. Read errors and events that disagree
    /// about one revision stop it as they stop a merge.
    public func integrate(as store: String, warnings: inout [FormatError]) throws(EnsembleError) -> DeviceView {
        try deviceIntegration(as: store, warnings: &warnings).view
    }

    /// ``integrate(as:warnings:)``. With `whileChecking`, as for ``merge(warnings:whileChecking:)``:
    /// the state replayed as the folder was read is handed over before the device's checks decide
    /// whether it is the device's; `isReplayedState` says whether the view's state is that one.
    public func integrate(
        as store: String, warnings: inout [FormatError], whileChecking: ((StoreState) -> Void)?
    ) throws(EnsembleError) -> (view: DeviceView, isReplayedState: Bool) {
        let integrated = try deviceIntegration(as: store, warnings: &warnings, whileChecking: whileChecking)
        return (integrated.view, integrated.isReplayedState)
    }

    /// ``integrate(as:warnings:)`` with the input and the integration it was made from, for
    /// operations that replay them again (diff's watched objects).
    func deviceIntegration(
        as store: String, warnings: inout [FormatError], whileChecking: ((StoreState) -> Void)? = nil
    ) throws(EnsembleError) -> (input: MergeInput, integration: DeviceIntegration, view: DeviceView, isReplayedState: Bool) {
        var evidence: DeliveryEvidence?
        // Replayed as read, as a merge is: a device that integrates everything a merge replays
        // (the usual case) reaches the merge's state without reading the events twice.
        let input = try MergeInputs.gather(
            inputs, reader: try reader(), summarize: true, replayEarly: .everything, modelVersions: options.modelVersions, warnings: &warnings,
            contentsRead: { evidence = DeliveryEvidence($1, highestComplete: $2) })
        warnings += Self.modelWarning(input)
        var handedOver = false
        if let whileChecking, let replayed = input.earlyReplay?.replayedState() {
            whileChecking(replayed)
            handedOver = true
        }
        let integration = DeviceIntegration.integrate(input, as: store)
        guard integration.problems.isEmpty else { throw EnsembleError(kind: .integrity, problems: integration.problems) }
        do {
            let state = try integration.state(input)
            return (input, integration, DeviceView(integration, state: state?.state, evidence: evidence), handedOver && state?.isReplayedState == true)
        } catch {
            throw EnsembleError(kind: .integrity, problems: error.problems)
        }
    }

    /// Without a model, a merge cannot do what a device does where the model matters; when the
    /// events say which model wrote them, say so (Spec/merge.md 10, `merge.model-not-given`).
    static func modelWarning(_ input: MergeInput) -> [FormatError] {
        guard input.model == nil else { return [] }
        var versions = (count: 0, example: String?.none)
        if let store = input.eventStore, let counted = try? store.modelVersions() { versions = counted }
        for sourced in input.events + input.baselines {
            guard let version = sourced.event.modelVersion else { continue }
            versions.count += 1
            if versions.example.map({ utf8Precedes(version, $0) }) ?? true { versions.example = version }
        }
        guard versions.count > 0, let example = versions.example else { return [] }
        let checked = input.modelVersions == nil ? " and model versions are not checked" : ""
        let flat = example.unicodeScalars.map { $0.value < 0x20 ? " " : String($0) }.joined()
        let shown = flat.hasPrefix("<?xml") ? "an Ensembles 1 property list of entity hashes" : flat.count > 60 ? String(flat.prefix(60)) + "…" : flat
        return [
            FormatError(
                .mergeModelNotGiven,
                "\(versions.count) events name the model that wrote them (\(shown)), but no model was given: related identifiers resolve in any entity, inverse relationships are not kept\(checked), so the state can differ from a device's (Spec/merge.md 8.5, 8.8, 5.7); give the app's model"
            )
        ]
    }

    /// What a merge would do, without replaying: the events that take part and every finding.
    package func analyze(warnings: inout [FormatError]) throws(EnsembleError) -> (input: MergeInput, analysis: MergeAnalysis) {
        let input = try MergeInputs.gather(inputs, reader: try reader(), modelVersions: options.modelVersions, warnings: &warnings)
        warnings += Self.modelWarning(input)
        return (input, MergeEngine.analyze(input))
    }

    /// Checks every ensemble folder of the first input without changing it (Spec/verify.md).
    /// Returns one ``EnsembleVerification`` per ensemble, in identifier order: its diagnostics
    /// (errors, warnings, infos, each with code, files and details) and its growth figures; a
    /// folder with errors is a result, not a thrown error, which is kept for inputs that cannot
    /// be verified at all (not a cloud folder, the event index failing).
    /// `progress` is called before each ensemble with its identifier and number of entries.
    /// With `asStore`, each report also says what that device holds back (Spec/merge.md 15.6).
    /// `severities` chooses the severity of codes (nil: not reported) and `acceptList` names an
    /// accept list of known damage; `recordingDigests` keeps the digests
    /// ``acceptList(for:)`` writes (Spec/verify.md 5.1).
    public func verify(
        asStore: String? = nil, severities: [FormatError.Code: Diagnostic.Severity?] = [:], acceptList: String? = nil,
        recordingDigests: Bool = false, progress: ((_ ensemble: String, _ entries: Int) -> Void)? = nil
    ) throws(EnsembleError)
        -> [EnsembleVerification]
    {
        var policy = FindingPolicy()
        do {
            try FindingPolicy.validate(severities)
        } catch {
            throw EnsembleError(.usage, error)
        }
        policy.severities = severities
        if let acceptList {
            do {
                let bytes = try EventFileReader.readBytes(FileReference(path: acceptList), limit: FindingPolicy.maximumAcceptListBytes)
                policy.accepted = try FindingPolicy.readAcceptList(bytes, path: acceptList)
            } catch {
                let reported =
                    error.code == .verifyInvalidAcceptList ? error : FormatError(.verifyInvalidAcceptList, error.message, location: .init(file: acceptList))
                throw EnsembleError(.usage, reported)
            }
        }
        policy.recordsDigests = recordingDigests
        var results: [EnsembleVerification] = []
        try forEachVerified(asStore: asStore, policy: policy, progress: progress) { _, verification in results.append(verification) }
        return results
    }

    /// The accept list of every diagnostic of `results` that may be accepted, each with the
    /// digests of its files (Spec/verify.md 5.1 item 3); `results` come from
    /// ``verify(asStore:severities:acceptList:recordingDigests:progress:)`` with `recordingDigests`.
    public static func acceptList(for results: [EnsembleVerification]) -> [UInt8] { FindingPolicy.acceptList(results) }

    /// Lists and reads each ensemble folder of the first input once, verifies it, and hands
    /// `body` what was read (summaries) with the verification: for operations that report on
    /// the folder beside verify's findings, without reading it again.
    package func forEachVerified(
        asStore: String? = nil, policy: FindingPolicy = FindingPolicy(), progress: ((_ ensemble: String, _ entries: Int) -> Void)? = nil,
        observe: ((_ ensemble: String, _ file: String, _ event: Event) -> Void)? = nil,
        _ body: (EnsembleContents, EnsembleVerification) throws(EnsembleError) -> Void
    ) throws(EnsembleError) {
        let listings = try listings()
        let reader = try reader()
        for listing in listings {
            progress?(listing.identifier, listing.entries.count)
            let objects = ObjectIndex()
            let contents = EnsembleContents.read(
                listing, reader: reader, summarize: true, observe: observe.map { observe in { observe(listing.displayPath, $0, $1) } },
                observeChanges: { file, header, changes in objects.add(file: file, header: header, changes: changes) })
            objects.finishRecording(allReplayedLikely: contents.baselines.isEmpty)
            var verification: EnsembleVerification
            do {
                verification = try EnsembleVerifier.verify(
                    listing, contents: contents, reader: reader, modelVersions: options.modelVersions, asStore: asStore, objects: objects)
            } catch {
                throw EnsembleError(.failure, error)
            }
            if !policy.changesNothing { verification = policy.apply(to: verification, listing: listing) }
            try body(contents, verification)
        }
    }
}

/// Why an operation on an ``Ensemble`` stopped: what kind of failure, and each problem as one
/// finding (code, number, files, details); its `description` is the finding lines (Spec/merge.md 5.9).
public struct EnsembleError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The request itself is wrong: a missing input, not a cloud folder, several ensembles.
        case usage
        /// Files could not be read (Spec/merge.md 3.5).
        case unreadable
        /// The inputs read, but an integrity check failed (Spec/merge.md 5).
        case integrity
        /// The toolkit's own machinery failed (its temporary event index).
        case failure
    }

    public var kind: Kind
    public var problems: [IntegrityProblem]
    /// The read errors behind ``problems`` with their exact locations, where an operation keeps
    /// them (``Ensemble/convert(to:format:blobContainers:wrapping:replacing:)``), for reports
    /// that list them as the `inspect` and `convert` documents do.
    package var readErrors: [FormatError] = []

    public init(kind: Kind, problems: [IntegrityProblem]) {
        self.kind = kind
        self.problems = problems
    }

    init(_ kind: Kind, _ error: FormatError) {
        self.init(kind: kind, problems: [IntegrityProblem(readError: error)])
    }

    /// A usage error for a path the caller gave: each error names `path`.
    init(usage errors: [FormatError], path: String) {
        self.init(kind: .usage, problems: errors.map { IntegrityProblem(readError: $0.inFile(path)) })
    }

    /// One finding line per problem (Spec/merge.md 5.9).
    public var description: String { problems.map(FindingLine.render).joined(separator: "\n") }
}

extension Ensemble.Options {
    /// Also accepts the model version an app's Core Data store records (its `Z_METADATA`), as
    /// `--store-metadata` does: events naming none of the known versions are 204 (Spec/model.md
    /// 8.4).
    public mutating func addModelVersion(fromCoreDataStore path: String) throws(FormatError) {
        var catalog = modelVersions ?? ModelVersionCatalog()
        catalog.add(try CoreDataStoreMetadata.read(path: path).modelVersion)
        modelVersions = catalog
    }

    /// Also accepts the model versions a compiled model (`.momd`) lists, or only `version` of
    /// them (Spec/model.md 8.4).
    public mutating func addModelVersions(fromCompiledModel path: String, version: String? = nil) throws(FormatError) {
        var catalog = modelVersions ?? ModelVersionCatalog()
        for known in try CompiledModel.versions(at: path, version: version) { catalog.add(known) }
        modelVersions = catalog
    }
}
