import CoreDataStore
import EnsembleModel
import Foundation
import JSONDocument
import TICDS

extension FormatError.Code {
    /// Change sets of a client that has no folder in `ClientDevices/` (Spec/ticds.md 8).
    public static let ticdsUnknownClient = Self("ticds.unknown-client")
    /// A client folder of `ClientDevices/` without `deviceInfo.plist` (Spec/ticds.md 8).
    public static let ticdsClientWithoutDeviceInfo = Self("ticds.client-without-device-info")
    /// A document without an integrity key: every client's sync stops (Spec/ticds.md 8).
    public static let ticdsIntegrityKeyMissing = Self("ticds.integrity-key-missing")
    /// A document with more than one integrity key: which one a client compares is the file
    /// system's listing order (Spec/ticds.md 8).
    public static let ticdsIntegrityKeyAmbiguous = Self("ticds.integrity-key-ambiguous")
    /// Sets of other clients that a client's AppliedSyncChangeSets does not list (Spec/ticds.md 8).
    public static let ticdsUnappliedSets = Self("ticds.unapplied-sets")
    /// Files left in a document's `TemporaryFiles/`: an upload that did not finish (Spec/ticds.md 8).
    public static let ticdsTemporaryFiles = Self("ticds.temporary-files")
    /// A document listed in `Information/DeletedDocuments/` (Spec/ticds.md 8).
    public static let ticdsDeletedDocument = Self("ticds.deleted-document")
    /// A client listed in a document's `DeletedClients/` (Spec/ticds.md 8).
    public static let ticdsDeletedClient = Self("ticds.deleted-client")
    /// Change sets the next vacuum would remove (Spec/ticds.md 6.3, 8).
    public static let ticdsVacuumWouldRemove = Self("ticds.vacuum-would-remove")
    /// A document without any WholeStore: no new client can download it (Spec/ticds.md 8).
    public static let ticdsNoWholeStore = Self("ticds.no-whole-store")
    /// Every set of a document has one modification time: the folder was copied without its
    /// dates, and the order of sets falls back to their identifiers (Spec/ticds.md 6.1, 8).
    public static let ticdsSameDates = Self("ticds.same-dates")
    /// Sets modified after the moment verify looks: they sort after every set made since (Spec/ticds.md 8).
    public static let ticdsFutureDates = Self("ticds.future-dates")
    /// `--as-client` names no client of the folder (Spec/ticds.md 7.1). Usage error.
    public static let ticdsNoSuchClient = Self("ticds.no-such-client")
}

/// The `inspect` document and the `verify` findings of a TICoreDataSync folder (Spec/ticds.md 7, 8).
enum TICDSReport {
    static func read(_ path: String, password: PasswordSource?, datesFile: String?) throws(EnsembleError) -> TICDSFolder {
        do {
            return try TICDSFolder.read(path, password: password, dates: try datesFile.map(TICDSFolder.readDates) ?? [:])
        } catch  where error.code == .ticdsInvalidDates {
            throw EnsembleError(.usage, error)
        } catch {
            throw EnsembleError(error.code == .ticdsNotTICDSFolder || error.code == .folderNotFound ? .usage : .unreadable, error)
        }
    }

    static func number(_ value: Double?) -> JSONValue { value.map { $0.isFinite ? JSONValue($0) : .null } ?? .null }
    static func string(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }

    static func file(_ file: TICDSFile?) -> JSONValue {
        guard let file else { return .null }
        return .object(JSONObject([("path", .string(file.path)), ("size", JSONValue(file.size)), ("modified", number(file.modified))]))
    }

    /// The framework's order of sets (Spec/ticds.md 6.1): the remote file's modification time,
    /// then the set identifier.
    static func applyOrder(_ sets: [TICDSChangeSet]) -> [TICDSChangeSet] {
        sets.sorted { a, b in
            a.file.modified != b.file.modified ? a.file.modified < b.file.modified : a.identifier.utf8.lexicographicallyPrecedes(b.identifier.utf8)
        }
    }

    /// The changes of one set in the order they are applied (Spec/ticds.md 6.2): change type,
    /// then local time stamp (a missing one first), then primary key.
    static func changeOrder(_ changes: [TICDSChange]) -> [TICDSChange] {
        changes.sorted { a, b in
            let types = (a.changeType ?? 0, b.changeType ?? 0)
            if types.0 != types.1 { return types.0 < types.1 }
            let stamps = (a.localTimeStamp ?? -.infinity, b.localTimeStamp ?? -.infinity)
            if stamps.0 != stamps.1 { return stamps.0 < stamps.1 }
            return a.primaryKey < b.primaryKey
        }
    }

    /// What `client` applies next (Spec/ticds.md 6.1): the sets of other clients its
    /// AppliedSyncChangeSets does not list (all of them when it has none in the folder), in order.
    static func view(of client: String, in document: TICDSDocument) -> (applied: [String]?, next: [TICDSChangeSet]) {
        unapplied(by: client, in: document, includingOwn: false)
    }

    /// The sets `client`'s AppliedSyncChangeSets does not list, in the framework's order: of the
    /// other clients (its view, 6.1), or also its own (a replay from its WholeStore, 10.1).
    static func unapplied(by client: String, in document: TICDSDocument, includingOwn: Bool) -> (applied: [String]?, next: [TICDSChangeSet]) {
        let applied = document.wholeStores.first { exactlyEqual($0.client, client) }?.applied?.map(\.identifier)
        let done = Set((applied ?? []).map(ExactString.init))
        return (applied, applyOrder(document.sets.filter { (includingOwn || !exactlyEqual($0.client, client)) && !done.contains(ExactString($0.identifier)) }))
    }

    static func views(_ document: TICDSDocument, only: String?) -> JSONValue {
        .object(
            JSONObject(
                document.syncClients.filter { client in only.map { exactlyEqual(client, $0) } ?? true }.map { client in
                    let (applied, next) = view(of: client, in: document)
                    let listed: [JSONValue] = next.map { set in
                        .object(
                            JSONObject([
                                ("client", .string(set.client)), ("identifier", .string(set.identifier)), ("modified", number(set.file.modified)),
                            ]))
                    }
                    return (client, .object(JSONObject([("appliedSets", applied.map(strings) ?? .null), ("next", .array(listed))])))
                }))
    }

    /// The WholeStores a downloading client chooses among (the latest modification time) and the
    /// one it takes, null on a tie (Spec/ticds.md 6.4).
    static func wholeStoreDownload(_ document: TICDSDocument) -> JSONValue {
        let dated = document.wholeStores.compactMap { whole in whole.file.map { (whole.client, $0.modified) } }
        let latest = dated.map(\.1).max()
        let candidates = dated.filter { $0.1 == latest }.map(\.0)
        return .object(JSONObject([("candidates", strings(candidates)), ("wouldTake", candidates.count == 1 ? .string(candidates[0]) : .null)]))
    }

    static func change(_ change: TICDSChange) -> JSONValue {
        .object(
            JSONObject([
                ("primaryKey", JSONValue(change.primaryKey)), ("changeType", change.changeType.map { JSONValue($0) } ?? .null),
                ("entity", string(change.entity)), ("syncID", string(change.syncID)), ("relevantKey", string(change.relevantKey)),
                ("relatedEntity", string(change.relatedEntity)), ("localTimeStamp", number(change.localTimeStamp)),
                ("changedAttributes", change.changedAttributes), ("changedRelationships", change.changedRelationships),
                ("damagedPayload", change.damagedPayload.map { .string($0.code.rawValue) } ?? .null),
            ]))
    }

    static func inspect(_ folder: TICDSFolder, asClient: String? = nil) -> JSONValue {
        let documents: [JSONValue] = folder.documents.map { document in
            let sets: [JSONValue] = applyOrder(document.sets).map { set in
                .object(
                    JSONObject([
                        ("client", .string(set.client)), ("identifier", .string(set.identifier)), ("file", file(set.file)),
                        ("form", string(set.form?.rawValue)), ("error", string(set.error?.code.rawValue)),
                        ("changes", set.changes.map { .array(changeOrder($0).map(change)) } ?? .null),
                    ]))
            }
            let wholeStores: [JSONValue] = document.wholeStores.map { whole in
                .object(
                    JSONObject([
                        ("client", .string(whole.client)), ("file", file(whole.file)), ("layers", strings(whole.layers)),
                        ("store", whole.store.map(store) ?? .null), ("error", string(whole.storeError?.code.rawValue)),
                        ("appliedFile", file(whole.appliedFile)),
                        ("appliedSets", whole.applied.map { strings($0.map(\.identifier)) } ?? .null),
                        ("appliedError", string(whole.appliedError?.code.rawValue)),
                    ]))
            }
            let recent: [JSONValue] = document.recentSyncs.map { sync in
                .object(JSONObject([("client", .string(sync.client)), ("file", file(sync.file)), ("lastSyncDate", number(sync.lastSyncDate))]))
            }
            return .object(
                JSONObject([
                    ("identifier", .string(document.identifier)), ("path", .string(document.path)), ("infoFile", string(document.infoFile)),
                    ("description", string(document.description)), ("integrityKeys", document.integrityKeys.map(strings) ?? .null),
                    ("syncClients", strings(document.syncClients)), ("sets", .array(sets)), ("wholeStores", .array(wholeStores)),
                    ("recentSyncs", .array(recent)), ("temporaryFiles", .array(document.temporaryFiles.map { file($0) })),
                    ("deletedClients", strings(document.deletedClients)), ("clientViews", views(document, only: asClient)),
                    ("wholeStoreDownload", wholeStoreDownload(document)),
                ]))
        }
        let clients: [JSONValue] = folder.clients.map { client in
            .object(
                JSONObject([("identifier", .string(client.identifier)), ("deviceInfo", string(client.deviceInfo)), ("description", string(client.description))])
            )
        }
        let errors: [JSONValue] = folder.errors.map { error in
            .object(JSONObject([("code", .string(error.code.rawValue)), ("file", string(error.location.file)), ("message", .string(error.message))]))
        }
        return .object(
            JSONObject([
                ("inspectVersion", JSONValue(Int64(1))), ("kind", .string("ticds")), ("path", .string(folder.path)),
                ("appIdentifier", .string(folder.appIdentifier)), ("document", string(folder.onlyDocument)),
                (
                    "encryption",
                    .object(
                        JSONObject([
                            ("encrypted", .bool(folder.password != .notEncrypted)),
                            ("salt", folder.salt.map { .string(lowercaseHex($0)) } ?? .null),
                            ("password", .string(folder.password.rawValue)), ("testString", string(folder.testString)),
                            ("undecrypted", strings(folder.undecrypted)),
                        ]))
                ),
                ("clients", .array(clients)), ("deletedDocuments", strings(folder.deletedDocuments)), ("deletedClients", strings(folder.deletedClients)),
                ("documents", .array(documents)), ("errors", .array(errors)),
            ]))
    }

    /// A WholeStore's Core Data store, as the store inspection shows it (Spec/inspect.md 2.5).
    static func store(_ store: CoreDataStoreMetadata) -> JSONValue {
        .object(
            JSONObject([
                ("storeType", string(store.storeType)), ("uuid", string(store.uuid)),
                ("modelVersionIdentifiers", strings(store.versionIdentifiers)),
                (
                    "entities",
                    .array(
                        store.entities.map { entity in
                            .object(JSONObject([("name", .string(entity.name)), ("rows", entity.rows.map { JSONValue($0) } ?? .null)]))
                        })
                ),
            ]))
    }

    /// Every finding of Spec/ticds.md 8, sorted as verify sorts diagnostics.
    static func verify(_ folder: TICDSFolder, now: Double) -> [Diagnostic] {
        var found: [Diagnostic] = []
        func add(
            _ code: FormatError.Code, _ severity: Diagnostic.Severity, _ files: [String], _ reason: String, _ consequence: String,
            _ details: [(String, JSONValue)] = []
        ) {
            let unique = sortedUnique(files)
            found.append(
                Diagnostic(code: code, severity: severity, number: nil, files: unique, reason: reason, consequence: consequence, details: JSONObject(details)))
        }
        // Files that could not be read, one finding each (Spec/ticds.md 8.1).
        for error in folder.errors {
            let path = error.location.file ?? "."
            if error.code == .fileKindBinaryStore {
                let set = folder.documents.flatMap(\.sets).first { exactlyEqual($0.file.path, path) }
                add(
                    error.code, .warning, [path], error.message,
                    "TICoreDataSync's released branches write sets in this form and apply them; the toolkit cannot show or replay what it holds",
                    [
                        ("client", string(set?.client)), ("set", string(set?.identifier)), ("size", set.map { JSONValue($0.file.size) } ?? .null),
                        ("modified", number(set?.file.modified)),
                    ])
                continue
            }
            add(error.code, .error, [path], error.message, consequence(of: error.code), [])
        }
        // A wrong password is one of `errors` (test.ticdsync); a missing one is said once.
        if folder.password == .notGiven && !folder.undecrypted.isEmpty {
            add(
                .ticdsPasswordRequired, .error, ["Encryption/salt.ticdsync"], "the folder is encrypted and no password was given",
                "\(folder.undecrypted.count) encrypted files were not read; give the app's sync password",
                [("undecrypted", JSONValue(Int64(folder.undecrypted.count)))])
        }
        let known = Set(folder.clients.map { ExactString($0.identifier) })
        for client in folder.clients where client.deviceInfo == nil {
            add(
                .ticdsClientWithoutDeviceInfo, .warning, ["ClientDevices/" + client.identifier],
                "client \(client.identifier) has a folder in ClientDevices but no deviceInfo.plist",
                "the framework lists it without a description; its sets are still applied (clients are found in SyncChanges)",
                [("client", .string(client.identifier))])
        }
        for identifier in folder.deletedDocuments {
            let present = folder.documents.contains { exactlyEqual($0.identifier, identifier) }
            add(
                .ticdsDeletedDocument, present ? .warning : .info, ["Information/DeletedDocuments/\(identifier).plist"],
                "document \(identifier) is listed as deleted" + (present ? " but its folder is still in Documents" : ""),
                "a client that opens it is told it was deleted and stops syncing it",
                [("document", .string(identifier)), ("folderPresent", .bool(present))])
        }
        for document in folder.documents {
            let base = document.path == "." ? "" : document.path + "/"
            let detail: (String, JSONValue) = ("document", .string(document.identifier))
            switch document.integrityKeys {
            case nil, []?:
                add(
                    .ticdsIntegrityKeyMissing, .error, [base + "IntegrityKey"], "document \(document.identifier) has no integrity key",
                    "every client's synchronization fails (integrity key directory missing) until the document is registered again", [detail])
            case let keys? where keys.count > 1:
                add(
                    .ticdsIntegrityKeyAmbiguous, .warning, keys.map { base + "IntegrityKey/" + $0 },
                    "document \(document.identifier) has \(keys.count) integrity keys",
                    "each client compares the first one its file system lists: clients may disagree and some stop syncing", [detail, ("keys", strings(keys))])
            default: break
            }
            if document.wholeStores.allSatisfy({ $0.file == nil }) {
                add(
                    .ticdsNoWholeStore, .warning, [base + "WholeStore"], "document \(document.identifier) has no WholeStore",
                    "a client registering the document has no store to download", [detail])
            }
            // A document folder read alone has no ClientDevices to compare with.
            for client in document.syncClients where !known.contains(ExactString(client)) && !folder.appIdentifier.isEmpty {
                let sets = document.sets.filter { exactlyEqual($0.client, client) }
                add(
                    .ticdsUnknownClient, .warning, sets.isEmpty ? [base + "SyncChanges/" + client] : sets.map(\.file.path),
                    "client \(client) has sync changes but no folder in ClientDevices",
                    "its sets are still applied by every other client (clients are found in SyncChanges, not ClientDevices)",
                    [detail, ("client", .string(client)), ("sets", JSONValue(Int64(sets.count)))])
            }
            if !document.temporaryFiles.isEmpty {
                add(
                    .ticdsTemporaryFiles, .warning, document.temporaryFiles.map(\.path),
                    "\(document.temporaryFiles.count) files left in TemporaryFiles: an upload that did not finish",
                    "nothing reads them; the uploading client replaces them at its next upload",
                    [detail, ("count", JSONValue(Int64(document.temporaryFiles.count)))])
            }
            for client in document.deletedClients {
                add(
                    .ticdsDeletedClient, .info, [base + "DeletedClients/\(client).plist"], "client \(client) was deleted from document \(document.identifier)",
                    "that client is told so at its next sync and stops syncing the document", [detail, ("client", .string(client))])
            }
            // Dates the order rests on (Spec/ticds.md 6.1): all one, or later than now.
            let dates = Set(document.sets.map(\.file.modified))
            if document.sets.count > 1, dates.count == 1, let date = dates.first {
                add(
                    .ticdsSameDates, .warning, document.sets.map(\.file.path),
                    "all \(document.sets.count) sets of document \(document.identifier) have one modification time",
                    "the folder was probably copied without its dates: clients now apply sets in the order of their identifiers, which can differ from the order they were made",
                    [detail, ("date", JSONValue(date))])
            }
            let future = applyOrder(document.sets.filter { $0.file.modified > now })
            if !future.isEmpty {
                add(
                    .ticdsFutureDates, .warning, future.map(\.file.path), "\(future.count) sets are dated after now",
                    "they sort after every set made until that date: clients apply later sets before them", [detail, ("sets", JSONValue(Int64(future.count)))])
            }
            // What each client has not applied yet, as its AppliedSyncChangeSets says (Spec/ticds.md 6.1).
            for whole in document.wholeStores where whole.applied != nil {
                let pending = view(of: whole.client, in: document).next
                guard let oldest = pending.first else { continue }
                add(
                    .ticdsUnappliedSets, .info, pending.map(\.file.path),
                    "client \(whole.client) has not applied \(pending.count) sets of other clients (per its AppliedSyncChangeSets)",
                    "it applies them at its next sync, in this order; the oldest is \(Int(max(0, now - oldest.file.modified))) seconds old",
                    [
                        detail, ("client", .string(whole.client)), ("sets", strings(pending.map(\.identifier))),
                        ("oldestAge", JSONValue(max(0, now - oldest.file.modified))),
                    ])
            }
            // The next vacuum (Spec/ticds.md 6.3): sets older than both the oldest WholeStore and
            // the least recent sync.
            let wholeDates = document.wholeStores.compactMap { $0.file?.modified }
            let syncDates = document.recentSyncs.map(\.file.modified)
            let cutoff = min(wholeDates.min() ?? now, syncDates.min() ?? now)
            let removed = applyOrder(document.sets.filter { $0.file.modified < cutoff })
            if !removed.isEmpty {
                add(
                    .ticdsVacuumWouldRemove, .info, removed.map(\.file.path), "\(removed.count) sets are older than the vacuum's cut-off",
                    "each client's next vacuum removes its own sets among them; a client that has not applied them must download the WholeStore",
                    [detail, ("cutoff", JSONValue(cutoff)), ("sets", JSONValue(Int64(removed.count)))])
            }
        }
        return found.sorted { a, b in
            if a.severity != b.severity { return a.severity < b.severity }
            if a.code != b.code { return a.code.rawValue.utf8.lexicographicallyPrecedes(b.code.rawValue.utf8) }
            return a.files.joined(separator: "\n").utf8.lexicographicallyPrecedes(b.files.joined(separator: "\n").utf8)
        }
    }

    static func consequence(of code: FormatError.Code) -> String {
        switch code {
        case .ticdsWrongPassword: "no encrypted file of the folder can be read; give the password the app uses"
        case .ticdsBadHMAC: "the framework refuses the file (integrity check failed); a set is never applied, a WholeStore never downloaded"
        case .ticdsTruncated: "the framework cannot decrypt the file: it was cut short or extended in transit"
        case .ticdsBadPadding: "the file decrypts to nothing usable although it is authentic: its writer is faulty"
        case .ticdsInvalidSalt: "no client can derive the key: encrypted files cannot be read by anyone"
        case .ticdsInvalidChangeSet: "the set cannot be applied; clients that have not applied it stop at it"
        case .ticdsInvalidAppliedSets: "what that client applied is unknown"
        default: "the file cannot be read; what it holds is missing from this report"
        }
    }
}

extension Ensemble {
    /// Whether `path` is a TICoreDataSync application folder or document folder: what `inspect`
    /// and `verify` read it as (Spec/ticds.md 2.1).
    package static func looksLikeTICDSFolder(_ path: String) -> Bool { TICDSFolder.looksLikeTICDS(path) }

    /// The first input, a TICoreDataSync application or document folder, as the `inspect`
    /// document of Spec/ticds.md 7: clients, documents, change sets (decoded when in SQLite
    /// form) in the order a client applies them, WholeStores, and every file that could not be
    /// read. The password of ``Options/password`` decrypts an encrypted folder. Nothing is
    /// written into the folder.
    ///
    /// With `asClient`, each document's `clientViews` holds that client's view only: the sets it
    /// applies next, in the framework's order, with the dates the order rests on (Spec/ticds.md
    /// 7.1); a client no document syncs with is a usage error, `ticds.no-such-client`.
    ///
    /// `datesFile` names a JSON object from paths (relative to the application folder) to
    /// seconds since 1970 that replace the files' modification times: the dates of a folder copied
    /// without them (Spec/ticds.md 6.5); a file that is no such object is a usage error,
    /// `ticds.invalid-dates`.
    public func inspectTICDS(asClient: String? = nil, datesFile: String? = nil) throws(EnsembleError) -> JSONValue {
        let folder = try TICDSReport.read(try firstInput(), password: options.password, datesFile: datesFile)
        if let asClient, !folder.documents.contains(where: { $0.syncClients.contains { exactlyEqual($0, asClient) } }) {
            throw EnsembleError(
                .usage,
                FormatError(.ticdsNoSuchClient, "no document of this folder has sync changes of client \(asClient)", location: .init(file: try firstInput())))
        }
        return TICDSReport.inspect(folder, asClient: asClient)
    }

    /// The findings of Spec/ticds.md 8 on the first input, a TICoreDataSync folder; `now` is
    /// the time ages are measured to (seconds since 1970); `datesFile` as for ``inspectTICDS(asClient:datesFile:)``.
    public func verifyTICDS(now: Double = Date().timeIntervalSince1970, datesFile: String? = nil) throws(EnsembleError) -> [Diagnostic] {
        TICDSReport.verify(try TICDSReport.read(try firstInput(), password: options.password, datesFile: datesFile), now: now)
    }
}
