import Foundation
import EnsemblesToolkit

/// `logtool inspect DEVICE-DIR` for people, rendered from the document of
/// ``Ensemble/inspectDevice(at:cloud:backendIdentity:)`` (Spec/device-state.md 5).
enum DeviceStateText {
    static func render(_ report: JSONValue) -> String {
        func field(_ value: JSONValue?, _ path: String...) -> JSONValue? { value?[JSONPointer(path)] }
        func shown(_ value: JSONValue?) -> String { InspectText.text(value) }
        func list(_ value: JSONValue?) -> String {
            let items = value?.arrayValue ?? []
            return items.isEmpty ? "none" : items.map(shown).joined(separator: ", ")
        }
        var lines = ["Device state of ensemble \(shown(field(report, "ensemble")))"]
        lines.append("  store: \(shown(field(report, "storeIdentifier")))")
        let identity = field(report, "backendIdentity")
        lines.append(
            "  backend identity: \(shown(field(identity, "value")))\(field(identity, "archived") == .bool(true) ? "" : " (not a keyed archive)")"
                + "  registration verified at merge: \(shown(field(report, "verifiesStoreRegistrationInCloud")))")
        lines.append("  app store built from baseline: \(shown(field(report, "baselineUsedToConstructStore")))")
        lines.append("  most recent baseline in the store: \(shown(field(report, "mostRecentBaseline")))")
        let store = field(report, "eventStore")
        let rows = (field(store, "rows")?.objectValue ?? JSONObject()).members.map { "\($0.key) \(shown($0.value))" }.joined(separator: ", ")
        lines.append("  event store: \(shown(field(store, "modelVersion")))\(field(store, "walFile") == .bool(true) ? ", with -wal" : "") (\(rows))")
        let incomplete = field(report, "incompleteEvents")?.arrayValue ?? []
        lines.append("  incomplete events: \(incomplete.isEmpty ? "none" : String(incomplete.count))")
        for event in incomplete {
            var notes: [String] = []
            if field(event, "mandatory") == .bool(true) { notes.append("MANDATORY") }
            notes.append(field(event, "inStore") == .bool(true) ? "in the store" : "not in the store")
            notes.append(field(event, "listed") == .bool(true) ? "listed in store.plist" : "not listed")
            lines.append("    \(shown(field(event, "uniqueIdentifier")))  \(notes.joined(separator: ", "))")
        }
        let events = field(report, "events")?.arrayValue ?? []
        lines.append("  events: \(events.count)")
        for event in events {
            var line = "    \(shown(field(event, "globalCount")))  type \(shown(field(event, "type")))  \(shown(field(event, "storeIdentifier")))"
            line += " r\(shown(field(event, "revision")))  \(shown(field(event, "uniqueIdentifier")))  \(shown(field(event, "objectChanges"))) changes"
            if field(event, "onlyInWal") == .bool(true) { line += "  (only in -wal)" }
            lines.append(line)
        }
        lines.append("  stores (saves and merges):")
        for (name, facts) in (field(report, "stores")?.objectValue ?? JSONObject()).members {
            lines.append(
                "    \(name)  \(shown(field(facts, "events"))) events, revisions \(shown(field(facts, "firstRevision")))-\(shown(field(facts, "lastRevision")))"
            )
        }
        let files = field(report, "dataFiles")
        lines.append("  data files: data/ \(list(field(files, "data")))  newdata/ \(list(field(files, "newdata")))")
        lines.append("    missing: \(list(field(files, "missing")))  unreferenced: \(list(field(files, "unreferenced")))")
        let cache = field(report, "transitCache")
        lines.append("  transit cache: upload \(list(field(cache, "upload")))  download \(list(field(cache, "download")))")
        for damaged in field(report, "damagedArchives")?.arrayValue ?? [] {
            lines.append(
                "  damaged archive: \(shown(field(damaged, "table"))) row \(shown(field(damaged, "primaryKey"))) (event \(shown(field(damaged, "event"))))"
                    + ": \(shown(field(damaged, "code"))) at \(shown(field(damaged, "pointer")))")
        }
        if let cloud = field(report, "cloud"), cloud != .null {
            lines.append("  cloud: registered \(shown(field(cloud, "registered")))")
            func identifiers(_ key: String) -> String {
                list(.array((field(cloud, key)?.arrayValue ?? []).map { field($0, "file") ?? .null }))
            }
            lines.append("    never uploaded: \(identifiers("neverUploaded"))")
            lines.append("    not imported: \(identifiers("notImported"))")
            lines.append("    data files not in the cloud: \(list(field(cloud, "dataFilesNotInCloud")))")
            lines.append("    baselines other than the store's: \(identifiers("otherBaselines"))")
            lines.append("    revisions with other contents in the cloud: \(identifiers("differingRevisions"))")
        } else {
            lines.append("  cloud: not given (205 not evaluated)")
        }
        let deleech = field(report, "forcedDeleech")?.arrayValue ?? []
        lines.append("  forced deleech at next launch or merge: \(deleech.isEmpty ? "none" : "")")
        for condition in deleech {
            let evidence = (field(condition, "evidence")?.objectValue ?? JSONObject()).members.map { "\($0.key) \(shown($0.value))" }
            lines.append("    \(shown(field(condition, "code"))) \(shown(field(condition, "reason"))): \(evidence.joined(separator: ", "))")
        }
        // What the facts say the next merge does (Spec/device-state.md 5.6, 5.7; repair.md 8.1-8.3).
        if let cloud = field(report, "cloud"), cloud != .null {
            func count(_ key: String) -> Int { field(cloud, key)?.arrayValue?.count ?? 0 }
            if !deleech.isEmpty {
                lines.append("  next merge: the device deleeches first (its unuploaded events are lost)")
            } else {
                lines.append(
                    "  next merge: imports \(count("notImported")) file(s) and integrates \(count("otherBaselines") > 0 ? "in full (a new baseline)" : "the new events"); \(count("neverUploaded")) event(s) and \(count("dataFilesNotInCloud")) data file(s) of its own wait to be uploaded"
                )
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
