import JSONDocument
import EnsembleModel
import CloudFolder

/// Whether a sync service is visibly still delivering what a finding misses (Spec/diagnostics.md
/// 2.4): an iCloud placeholder or a partial file of the missing file, or a part of the missing
/// event already present. `pending` then, `missing` otherwise: the difference between waiting and
/// repairing.
struct DeliveryEvidence {
    /// `folder/name` of every file a placeholder or a partial file stands for. Names and stores
    /// by their bytes: two spelt in NFC and NFD are two.
    private var arriving = Set<ExactString>()
    /// By store, the revisions of every event with a file arriving or a part present.
    private var arrivingRevisions: [ExactString: [Int64]] = [:]
    /// The highest revision of each store among the complete events.
    private var highestComplete: [ExactString: Int64] = [:]
    /// The folders whose names may carry wrapper suffixes.
    static let namedFolders: Set<String> = ["events", "baselines"]
    /// The folders of an ensemble whose files a placeholder or partial file may stand for.
    static let folders: Set<String> = ["stores", "events", "baselines", "data"]

    /// `highestComplete` adds, by store, the highest revision of complete events that `contents`
    /// does not hold (those handed to a sink while the folder was read).
    init(_ contents: EnsembleContents, highestComplete: [ExactString: Int64] = [:]) {
        for debris in contents.debris where debris.kind == .iCloudPlaceholder || debris.kind == .partialFile {
            // `folder/NAME`, in the ensemble or in a duplicate folder folded into it
            // (`../E 2/events/NAME`): after the fold both are entries of the ensemble
            // (Spec/cloud-layout.md 3.1 rule 2, diagnostics.md 2.4).
            let components = debris.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard components.count >= 2 else { continue }
            let parts = Array(components.suffix(2))
            guard components.count == 2 || (components.first == ".." && Self.folders.contains(parts[0])) else { continue }
            guard let arrivingName = CloudFileName.arrivingName(parts[1]) ?? (debris.kind == .partialFile ? parts[1] : nil) else { continue }
            // An event or baseline arriving wrapped is named without its wrapper suffixes
            // (`7_A_3.cdeevent.zip.icloud` stands for `7_A_3.cdeevent`); names in stores/ and data/
            // are taken as they are (Spec/wrappers.md 5.3).
            let name = Self.namedFolders.contains(parts[0]) ? CloudFileName.strippingWrapperSuffixes(arrivingName) : arrivingName
            arriving.insert(ExactString(parts[0] + "/" + name))
            if parts[0] == "events", let event = CloudFileName.parseEvent(name) {
                arrivingRevisions[ExactString(event.storeIdentifier), default: []].append(event.revision)
            }
        }
        self.highestComplete = highestComplete
        // A type 0 event is not complete (Spec/diagnostics.md 2.4); an unreadable file may be.
        for file in contents.events where file.entry.isComplete && (file.entry.summary?.event.type ?? file.entry.event?.type) != .incomplete {
            let store = ExactString(file.name.storeIdentifier)
            self.highestComplete[store] = max(self.highestComplete[store] ?? .min, file.name.revision)
        }
        // A multipart set with a part present stands for its revision while it is itself pending.
        for file in contents.events where !file.entry.isComplete && delivery(ofIncomplete: file) == .string("pending") {
            arrivingRevisions[ExactString(file.name.storeIdentifier), default: []].append(file.name.revision)
        }
    }

    /// `pending` or `missing` for a finding of `code` with `details`; nil for codes that miss nothing.
    func delivery(_ code: FormatError.Code, _ details: JSONObject) -> JSONValue? {
        let store = details["store"]?.stringValue
        func revisionArriving(_ revisions: ClosedRange<Int64>) -> Bool {
            store.flatMap { arrivingRevisions[ExactString($0)] }?.contains(where: revisions.contains) ?? false
        }
        let pending: Bool
        switch code {
        case .verifyRevisionGap, .mergeRevisionGap:
            guard let first = details["first"]?.numberValue?.int64Value, let last = details["last"]?.numberValue?.int64Value, first <= last else { return nil }
            pending = revisionArriving(first...last)
        case .verifyMissingDependency, .mergeMissingDependency:
            guard let revision = details["revision"]?.numberValue?.int64Value else { return nil }
            pending = revisionArriving(revision...revision)
        case .verifyMissingDataFile, .mergeMissingDataFile:
            pending = details["dataFile"]?.stringValue.map { arriving.contains(ExactString("data/" + $0)) } ?? false
        case .verifyUnregisteredStore, .mergeUnregisteredStore:
            pending = store.map { arriving.contains(ExactString("stores/" + $0)) } ?? false
        default:
            return nil
        }
        return .string(pending ? "pending" : "missing")
    }

    /// An incomplete multipart set is pending while a missing part is arriving, or while its store
    /// has no complete event after it (the upload may simply not be finished).
    func delivery(ofIncomplete file: EventFileEntry) -> JSONValue {
        let missingPartArriving = (1...max(1, file.entry.partCount ?? 1)).contains { part in
            guard file.entry.files[part] == nil, let count = file.entry.partCount else { return false }
            let name = "\(file.name.globalCount)_\(file.name.storeIdentifier)_\(file.name.revision)_\(part)of\(count)\(CloudFileName.eventExtension)"
            return arriving.contains(ExactString("events/" + name))
        }
        let later = (highestComplete[ExactString(file.name.storeIdentifier)] ?? .min) > file.name.revision
        return .string(missingPartArriving || !later ? "pending" : "missing")
    }
}
