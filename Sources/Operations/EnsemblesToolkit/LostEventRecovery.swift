import CloudFolder
import DeviceState
import EnsembleModel
import EventCodecs
import Foundation
import JSONDocument

/// The lost events that devices still hold, taken back into a cure (Spec/repair.md 3.6.6, 9.5):
/// their changes go into the cure's baseline instead of being lost with it.
struct LostEventRecovery {
    /// One lost event found in a device's event store.
    struct Event {
        /// The event as a v2 event, sourced from the device's event store.
        var sourced: SourcedEvent
        /// The device folder as the user gave it.
        var device: String
    }

    var events: [Event] = []
    /// Data files the recovered events reference that the cloud's `data/` lacks, taken from the
    /// device (`data/`, else `newdata/`): they are added with the cure's baseline (9.3 rule 5).
    var dataFiles: [(name: String, bytes: [UInt8])] = []
    /// Why a device gave nothing for a lost revision it was asked about (the report says so).
    var notes: [String] = []

    /// What `devices` hold of the `lost` runs of the cloud ensemble `ensemble`, whose `data/`
    /// holds `cloudData`. A device is read as `inspect DEVICE-DIR` reads it; the first device (in
    /// the order given) that holds a complete save or merge event of a lost (store, revision)
    /// supplies it. An event whose archive is damaged, or one with a data file that neither the
    /// cloud nor the device has, is not recovered: its changes could not all be kept.
    static func recover(
        _ lost: [LostRevisionCure.Lost], from devices: [String], ensemble: String, cloudData: Set<ExactString>?
    ) throws(FormatError) -> LostEventRecovery {
        var recovery = LostEventRecovery()
        // By bytes: stores, and data files, named in NFC and NFD are two.
        var wanted = Set(lost.flatMap { run in (run.first...run.last).map { StoreRevision(run.store, $0) } })
        var added = Set<ExactString>()
        for device in devices {
            guard !wanted.isEmpty else { break }
            let state = try DeviceState.read(device)
            guard state.folder.ensemble == ensemble else {
                recovery.notes.append("\(device) holds the ensemble \(state.folder.ensemble), not \(ensemble): nothing taken from it")
                continue
            }
            let candidates = state.events.filter { ($0.type == 200 || $0.type == 300) && wanted.contains(StoreRevision($0.storeIdentifier, $0.revision)) }
            for held in candidates.sorted(by: { a, b in
                exactlyEqual(a.storeIdentifier, b.storeIdentifier) ? a.revision < b.revision : utf8Precedes(a.storeIdentifier, b.storeIdentifier)
            }) {
                guard wanted.contains(StoreRevision(held.storeIdentifier, held.revision)) else { continue }
                let name = "\(held.storeIdentifier) revision \(held.revision)"
                guard let event = held.v2Event().event else {
                    recovery.notes.append("\(device) holds \(name), but an archive of it is damaged: not recovered")
                    continue
                }
                var files: [(name: String, bytes: [UInt8])] = []
                var missing: String?
                for file in sortedUnique(event.objectChanges.flatMap(\.dataFiles))
                where !(cloudData?.contains(ExactString(file)) ?? true) && !added.contains(ExactString(file)) {
                    // A copy that is no regular file, or too large, is as good as none.
                    let copy = ["/data/", "/newdata/"].lazy.compactMap {
                        try? EventFileReader.readBytes(at: URL(fileURLWithPath: state.folder.folder + $0 + file), limit: DataBlob.maximumContainerBytes)
                    }.first
                    guard let copy else {
                        missing = file
                        break
                    }
                    files.append((file, copy))
                }
                if let missing {
                    recovery.notes.append("\(device) holds \(name), but its data file \(missing) is in neither the cloud nor the device: not recovered")
                    continue
                }
                wanted.remove(StoreRevision(held.storeIdentifier, held.revision))
                for file in files where added.insert(ExactString(file.name)).inserted { recovery.dataFiles.append(file) }
                recovery.events.append(Event(sourced: SourcedEvent(event: event, file: state.folder.eventStore), device: device))
            }
        }
        return recovery
    }

    /// The report's `recovered` list (Spec/repair.md 3.6.4): each event with its store,
    /// revision, global count and the device it came from.
    var report: JSONValue {
        .array(
            events.map {
                .object(
                    JSONObject([
                        ("store", .string($0.sourced.event.storeIdentifier)), ("revision", JSONValue($0.sourced.event.revision)),
                        ("globalCount", JSONValue($0.sourced.event.globalCount)), ("device", .string($0.device)),
                    ]))
            })
    }
}
