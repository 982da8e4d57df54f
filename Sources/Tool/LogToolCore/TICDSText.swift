import EnsemblesToolkit
import Foundation

/// The text form of the `inspect` document of a TICoreDataSync folder (Spec/ticds.md 7): the
/// same facts as the JSON, one line each.
enum TICDSText {
    static func render(_ report: JSONValue, asClient: String? = nil) -> String {
        func member(_ value: JSONValue?, _ path: String...) -> JSONValue? { value?[JSONPointer(path)] }
        func shown(_ value: JSONValue?) -> String { escaped(InspectText.text(value)) }
        func date(_ value: JSONValue?) -> String {
            guard let seconds = value?.numberValue?.doubleValue else { return "-" }
            return ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: seconds))
        }
        var lines = ["TICoreDataSync application \(shown(member(report, "appIdentifier"))) (\(shown(member(report, "path"))))"]
        let encryption = member(report, "encryption")
        lines.append("  Encryption: \(member(encryption, "encrypted") == .bool(true) ? "on" : "off"), password \(shown(member(encryption, "password")))")
        let undecrypted = member(encryption, "undecrypted")?.arrayValue ?? []
        if !undecrypted.isEmpty { lines.append("    \(undecrypted.count) encrypted files not read") }
        let clients = member(report, "clients")?.arrayValue ?? []
        lines.append("  Clients (\(clients.count))")
        for client in clients {
            let info = member(client, "deviceInfo") == .null ? "no deviceInfo.plist" : shown(member(client, "description"))
            lines.append("    \(shown(member(client, "identifier"))): \(info)")
        }
        for (title, key) in [("Deleted documents", "deletedDocuments"), ("Deleted clients", "deletedClients")] {
            let listed = member(report, key)?.arrayValue ?? []
            if !listed.isEmpty { lines.append("  \(title): " + listed.map(shown).joined(separator: ", ")) }
        }
        for document in member(report, "documents")?.arrayValue ?? [] {
            lines.append("  Document \(shown(member(document, "identifier"))) (\(shown(member(document, "path")))): \(shown(member(document, "description")))")
            let keys = member(document, "integrityKeys")?.arrayValue
            lines.append("    Integrity key: " + (keys.map { $0.isEmpty ? "none" : $0.map(shown).joined(separator: ", ") } ?? "no IntegrityKey folder"))
            let sets = member(document, "sets")?.arrayValue ?? []
            lines.append("    Change sets (\(sets.count), in the order a client applies them)")
            for set in sets {
                let changes = member(set, "changes")?.arrayValue.map { "\($0.count) changes" } ?? shown(member(set, "error"))
                lines.append(
                    "      \(date(member(set, "file", "modified"))) \(shown(member(set, "client")))/\(shown(member(set, "identifier"))) \(shown(member(set, "form"))): \(changes)"
                )
            }
            for whole in member(document, "wholeStores")?.arrayValue ?? [] {
                let layers = (member(whole, "layers")?.arrayValue ?? []).map(shown).joined(separator: "+")
                let applied = member(whole, "appliedSets")?.arrayValue.map { "\($0.count) applied sets" } ?? "applied sets unknown"
                let store = member(whole, "store").flatMap { $0 == .null ? nil : "store \(shown(member($0, "uuid")))" } ?? shown(member(whole, "error"))
                lines.append(
                    "    WholeStore of \(shown(member(whole, "client"))) (\(layers.isEmpty ? "plain" : layers), \(date(member(whole, "file", "modified")))): \(store), \(applied)"
                )
            }
            for sync in member(document, "recentSyncs")?.arrayValue ?? [] {
                lines.append("    Last sync of \(shown(member(sync, "client"))): \(date(member(sync, "file", "modified")))")
            }
            for (client, view) in member(document, "clientViews")?.objectValue?.members ?? [] {
                let next = member(view, "next")?.arrayValue ?? []
                let applied = member(view, "appliedSets")?.arrayValue.map { "\($0.count) applied" } ?? "no AppliedSyncChangeSets in the folder"
                lines.append("    Client \(escaped(client)) applies next (\(next.count); \(applied))")
                for set in next {
                    lines.append("      \(date(member(set, "modified"))) \(shown(member(set, "client")))/\(shown(member(set, "identifier")))")
                }
            }
            if asClient == nil {
                let download = member(document, "wholeStoreDownload")
                let takes = member(download, "wouldTake").flatMap { $0 == .null ? nil : shown($0) } ?? "none (a tie, or no WholeStore)"
                lines.append("    A whole-store download takes: \(takes)")
            }
            let temporary = member(document, "temporaryFiles")?.arrayValue ?? []
            if !temporary.isEmpty { lines.append("    \(temporary.count) files in TemporaryFiles") }
        }
        let errors = member(report, "errors")?.arrayValue ?? []
        if !errors.isEmpty {
            lines.append("  Unreadable (\(errors.count))")
            for error in errors { lines.append("    \(shown(member(error, "code"))) \(shown(member(error, "file"))): \(shown(member(error, "message")))") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
