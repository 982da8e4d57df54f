import Foundation
import JSONDocument
import EnsembleModel
import CloudFolder
import DeviceState

extension FormatError.Code {
    /// `timeline -o FILE`: FILE exists without `--force`, or appeared meanwhile (Spec/timeline.md 1).
    public static let timelineDestinationExists = Self("timeline.destination-exists")
}

/// What `logtool timeline` draws for one ensemble (Spec/timeline.md): a lane per store, a mark
/// per event and baseline, and every finding of verify (with device mode's, when asked) placed
/// where it happens. Made from the same reports as `inspect` and `verify`.
public struct TimelineReport: Sendable {
    public struct Lane: Sendable {
        public var store: String
        public var registered: Bool
    }

    /// One event or baseline.
    public struct Mark: Sendable {
        public var file: String
        public var store: String
        public var revision: Int64
        public var globalCount: Int64
        /// Seconds since 2001 (the events' own clock).
        public var timestamp: Double
        public var type: Int
        public var inserts: Int
        public var updates: Int
        public var deletes: Int
        public var modelVersion: String?
        /// For a baseline: the stores its revision set names, which it spans.
        public var spans: [String]
        /// With a device (Spec/timeline.md 2): an event of the device's own store that no file of
        /// the cloud holds; `file` is the path it would have there.
        public var onlyOnDevice = false
    }

    /// Where a finding is drawn (Spec/timeline.md 3).
    package enum Placement: Sendable {
        /// On the lane of `store`, at `globalCount`.
        case event(store: String, globalCount: Int64)
        /// Across the lane of `store`, from one global count to another.
        case gap(store: String, from: Int64, to: Int64)
        /// From an event to the lane of the store it needs.
        case dependency(store: String, globalCount: Int64, needs: String, revision: Int64)
        /// On the label of a store's lane.
        case lane(store: String)
        /// Above the lanes: the folder as a whole.
        case folder
    }

    public struct Finding: Sendable {
        public var diagnostic: Diagnostic
        package var placement: Placement
    }

    public var identifier: String
    public var lanes: [Lane]
    public var marks: [Mark]
    public var findings: [Finding]
    /// verify's growth figures (Spec/diagnostics.md).
    public var growth: JSONValue
}

extension Ensemble {
    /// One timeline per ensemble of the first input (Spec/timeline.md); with `asStore`, device
    /// mode's held-back events are among the findings. With `device` (an Ensembles 1.x device's
    /// event-data folder), the events of its own store that never reached the cloud are marks of
    /// its lane, and its findings against the cloud (`verifyDevice`) are among the findings of
    /// its ensemble (the first one when no ensemble has its name).
    public func timeline(asStore: String? = nil, device: String? = nil, backendIdentity: String? = nil) throws(EnsembleError) -> [TimelineReport] {
        var reports: [TimelineReport] = []
        // Each folder listed and read once: the marks come from what verify read.
        try forEachVerified(asStore: asStore) { contents, verification in
            var marks: [TimelineReport.Mark] = []
            marks.reserveCapacity(contents.events.count + contents.baselines.count)
            contents.forEachEntry { entry in
                guard let event = entry.event, let counts = entry.changeCounts else { return }
                marks.append(
                    TimelineReport.Mark(
                        file: entry.file, store: event.storeIdentifier, revision: event.revision, globalCount: event.globalCount,
                        timestamp: event.timestamp, type: Int(event.type.rawValue), inserts: counts.inserts, updates: counts.updates,
                        deletes: counts.deletes, modelVersion: event.modelVersion,
                        spans: event.type == .baseline ? event.revisionSet.stores : []))
            }
            marks.sort { $0.globalCount != $1.globalCount ? $0.globalCount < $1.globalCount : utf8Precedes($0.file, $1.file) }
            // Stores by their bytes: two named in NFC and NFD are two lanes.
            let registered = Set(contents.stores.map { ExactString($0.storeIdentifier) })
            // Each store once before sorting: a folder names a few stores a million times.
            var named = registered
            for mark in marks { named.insert(ExactString(mark.store)) }
            for file in contents.events { named.insert(ExactString(file.name.storeIdentifier)) }
            let stores = sortedUnique(named.map(\.value))
            let lanes = stores.map { TimelineReport.Lane(store: $0, registered: registered.contains(ExactString($0))) }
            let byRevision = Self.byRevision(marks)
            let findings = verification.diagnostics.map { diagnostic in
                TimelineReport.Finding(diagnostic: diagnostic, placement: Self.placement(of: diagnostic, byRevision: byRevision))
            }
            reports.append(
                TimelineReport(identifier: contents.identifier, lanes: lanes, marks: marks, findings: findings, growth: verification.growth))
        }
        if let device { try Self.addDevice(device, cloud: try firstInput(), backendIdentity: backendIdentity, to: &reports) }
        return reports
    }

    /// The device's events that only it holds, as marks of its store's lane, and its findings
    /// against the cloud, placed as verify's are (Spec/timeline.md 2, 3).
    private static func addDevice(_ device: String, cloud: String, backendIdentity: String?, to reports: inout [TimelineReport]) throws(EnsembleError) {
        let (state, document) = try deviceFacts(at: device, cloud: cloud, backendIdentity: backendIdentity)
        guard let index = reports.firstIndex(where: { $0.identifier == state.folder.ensemble }) ?? reports.indices.first else { return }
        var report = reports[index]
        let onlyHere = Set(
            (document.objectValue?["cloud"]?.objectValue?["neverUploaded"]?.arrayValue ?? []).compactMap {
                $0.objectValue?["uniqueIdentifier"]?.stringValue
            })
        for held in state.ownCompleteEvents where onlyHere.contains(held.uniqueIdentifier) {
            let event = held.v2Event().event
            let counts = event.map { SourcedEvent(event: $0, file: "").changeCounts } ?? SourcedEvent.ChangeCounts()
            var mark = TimelineReport.Mark(
                file: DeviceState.cloudFile(of: held), store: held.storeIdentifier, revision: held.revision, globalCount: held.globalCount,
                timestamp: held.timestamp, type: Int(held.type), inserts: counts.inserts, updates: counts.updates, deletes: counts.deletes,
                modelVersion: held.modelVersion, spans: held.type == 100 ? held.revisions.stores : [])
            mark.onlyOnDevice = true
            report.marks.append(mark)
        }
        report.marks.sort { $0.globalCount != $1.globalCount ? $0.globalCount < $1.globalCount : utf8Precedes($0.file, $1.file) }
        if !report.lanes.contains(where: { exactlyEqual($0.store, state.info.storeIdentifier) }) {
            report.lanes.append(TimelineReport.Lane(store: state.info.storeIdentifier, registered: false))
            report.lanes.sort { utf8Precedes($0.store, $1.store) }
        }
        let byRevision = byRevision(report.marks)
        report.findings += deviceDiagnostics(document).map { TimelineReport.Finding(diagnostic: $0, placement: placement(of: $0, byRevision: byRevision)) }
        reports[index] = report
    }

    /// Where a finding happens: at the event its first file names, across the missing
    /// revisions of a gap, towards the revision a dependency needs, on a store's lane, or on the
    /// folder (Spec/timeline.md 3).
    /// The global count of each event mark by its store and revision.
    private static func byRevision(_ marks: [TimelineReport.Mark]) -> [StoreRevision: Int64] {
        var byRevision: [StoreRevision: Int64] = [:]
        for mark in marks where mark.spans.isEmpty { byRevision[StoreRevision(mark.store, mark.revision)] = mark.globalCount }
        return byRevision
    }

    static func placement(of diagnostic: Diagnostic, byRevision: [StoreRevision: Int64]) -> TimelineReport.Placement {
        let details = diagnostic.details
        let store = details["store"]?.stringValue
        let named = diagnostic.files.lazy.compactMap { file -> EventFileName? in
            guard file.hasPrefix("events/") else { return nil }
            return CloudFileName.parseEvent(CloudFileName.strippingWrapperSuffixes(String(file.dropFirst("events/".count))))
        }.first
        switch diagnostic.code {
        case .verifyRevisionGap:
            guard let store, let first = details["first"]?.numberValue?.int64Value, let named else { break }
            let before = byRevision[StoreRevision(store, first - 1)] ?? named.globalCount
            return .gap(store: store, from: before, to: named.globalCount)
        case .verifyMissingDependency:
            guard let store, let revision = details["revision"]?.numberValue?.int64Value, let named else { break }
            return .dependency(store: named.storeIdentifier, globalCount: named.globalCount, needs: store, revision: revision)
        case .verifyUnregisteredStore:
            if let store { return .lane(store: store) }
        default:
            break
        }
        if let named { return .event(store: named.storeIdentifier, globalCount: named.globalCount) }
        return .folder
    }
}
