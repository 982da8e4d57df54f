import CloudFolder
import Crypto
import DeviceState
import EventCodecs
import EnsembleModel
import Foundation
import JSONDocument

/// The facts of one device's folder, optionally against its cloud folder, as the document of
/// Spec/device-state.md 5 (`logtool inspect DEVICE-DIR --json`).
enum DeviceInspection {
    /// The cloud folder's events and baselines, by unique identifier.
    struct CloudEvents {
        var ensembleFolder: String
        /// One per event or baseline: path relative to the ensemble folder, and the SHA-256 of
        /// its v2 JSON encoding, which two events share exactly when their contents are equal.
        var events: [(event: Event, file: String, digest: [UInt8])]
        /// By bytes: two named in NFC and NFD are two files.
        var dataFiles: Set<ExactString>
    }

    /// The SHA-256 of an event's v2 JSON encoding: the same for the same contents, whichever
    /// file or store they were read from (Spec/device-state.md 5.6, `differingRevisions`).
    static func digest(_ event: Event) -> [UInt8] {
        Array(SHA256.hash(data: (try? V2JSONEncoder().encode(event)) ?? []))
    }

    /// The ensemble folder of `path`: `path/<ensemble>` when that is a folder, else `path` itself.
    static func readCloud(_ path: String, ensemble: String) throws(FormatError) -> CloudEvents {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        let nested = path + "/" + ensemble
        let folder = manager.fileExists(atPath: nested, isDirectory: &isDirectory) && isDirectory.boolValue ? nested : path
        guard manager.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw FormatError(.folderNotFound, "no such folder", location: .init(file: path))
        }
        let reader = EventFileReader()
        var events: [(event: Event, file: String, digest: [UInt8])] = []
        for kind in ["events", "baselines"] {
            for name in DeviceFolder.fileNames(in: folder + "/" + kind) {
                let result = reader.readFile(at: URL(fileURLWithPath: folder + "/" + kind + "/" + name), displayName: kind + "/" + name)
                // Only the header is kept beside the digest: a cloud folder's changes can be large.
                for event in result.events {
                    var header = event
                    header.objectChanges = []
                    events.append((header, kind + "/" + name, digest(event)))
                }
            }
        }
        return CloudEvents(ensembleFolder: folder, events: events, dataFiles: Set(DeviceFolder.fileNames(in: folder + "/data").map(ExactString.init)))
    }

    /// Sections 5.6 and 5.7 added to the device's facts.
    static func document(_ state: DeviceState, cloud: CloudEvents?, backendIdentity: String?) -> JSONValue {
        let store = state.info.storeIdentifier
        var cloudValue = JSONValue.null
        var registrationPresent = false
        var registrationIsDictionary = false
        if let cloud {
            let registration = cloud.ensembleFolder + "/stores/" + store
            registrationPresent = FileManager.default.fileExists(atPath: registration)
            registrationIsDictionary = DeviceFolder.isPropertyListDictionary(registration)
            // Identifiers and names by their bytes: two spelt in NFC and NFD are two.
            let inCloud = Set(cloud.events.map { ExactString($0.event.uniqueIdentifier) })
            let upload = Set(state.uploadCache.map(ExactString.init))
            let neverUploaded = state.ownCompleteEvents.filter { !inCloud.contains(ExactString($0.uniqueIdentifier)) }
                .sorted { $0.globalCount != $1.globalCount ? $0.globalCount < $1.globalCount : utf8Precedes($0.uniqueIdentifier, $1.uniqueIdentifier) }
                .map { event -> JSONValue in
                    let file = DeviceState.cloudFile(of: event)
                    let name = URL(fileURLWithPath: file).lastPathComponent
                    return .object(
                        JSONObject([
                            ("uniqueIdentifier", .string(event.uniqueIdentifier)), ("file", .string(file)),
                            ("inUploadCache", .bool(upload.contains(ExactString(name)))),
                        ]))
                }
            let imported = Set(state.events.filter { $0.type != 0 }.map { ExactString($0.uniqueIdentifier) })
            let download = Set(state.downloadCache.map(ExactString.init))
            var seen = Set<ExactString>()
            let byCount = { (a: Event, b: Event) in
                a.globalCount != b.globalCount ? a.globalCount < b.globalCount : utf8Precedes(a.uniqueIdentifier, b.uniqueIdentifier)
            }
            let notImported = cloud.events.filter {
                !imported.contains(ExactString($0.event.uniqueIdentifier)) && seen.insert(ExactString($0.event.uniqueIdentifier)).inserted
            }
            .sorted { byCount($0.event, $1.event) }
            .map { entry -> JSONValue in
                let name = URL(fileURLWithPath: entry.file).lastPathComponent
                return .object(
                    JSONObject([
                        ("uniqueIdentifier", .string(entry.event.uniqueIdentifier)), ("file", .string(entry.file)),
                        ("inDownloadCache", .bool(download.contains(ExactString(name)))),
                    ]))
            }
            // A cloud baseline that is not the one the store was built from: the next merge
            // imports it and integrates in full (repair.md 8.3).
            let builtFrom = state.info.baselineUsedToConstructStore
            let otherBaselines = cloud.events.filter { entry in
                entry.event.type == .baseline && builtFrom.map { !exactlyEqual(entry.event.uniqueIdentifier, $0) } ?? false
            }
            .sorted { byCount($0.event, $1.event) }
            .map { JSONValue.object(JSONObject([("uniqueIdentifier", .string($0.event.uniqueIdentifier)), ("file", .string($0.file))])) }
            // One (store, revision) on both sides with other contents: the device never reads a
            // file with its own name for an event (repair.md 8.2), so the two stay apart.
            var differing: [JSONValue] = []
            // Keyed and ordered by bytes: stores named in NFC and NFD are two stores.
            let revisions = Dictionary(grouping: cloud.events.filter { $0.event.type != .baseline }) {
                StoreRevision($0.event.storeIdentifier, $0.event.revision)
            }
            for held in state.events.filter({ $0.type == 200 || $0.type == 300 }).sorted(by: { a, b in
                if !exactlyEqual(a.storeIdentifier, b.storeIdentifier) { return utf8Precedes(a.storeIdentifier, b.storeIdentifier) }
                return a.revision != b.revision ? a.revision < b.revision : utf8Precedes(a.uniqueIdentifier, b.uniqueIdentifier)
            }) {
                // A damaged archive is not compared: damagedArchives lists it.
                guard let mine = held.v2Event().event else { continue }
                let own = digest(mine)
                for entry in (revisions[StoreRevision(held.storeIdentifier, held.revision)] ?? []).sorted(by: { utf8Precedes($0.file, $1.file) })
                where entry.digest != own {
                    differing.append(
                        .object(
                            JSONObject([
                                ("storeIdentifier", .string(held.storeIdentifier)), ("revision", JSONValue(held.revision)),
                                ("uniqueIdentifier", .string(held.uniqueIdentifier)), ("cloudUniqueIdentifier", .string(entry.event.uniqueIdentifier)),
                                ("file", .string(entry.file)), ("sameName", .bool(exactlyEqual(entry.file, DeviceState.cloudFile(of: held)))),
                            ])))
                }
            }
            cloudValue = .object(
                JSONObject([
                    ("registered", .bool(registrationPresent)), ("neverUploaded", .array(neverUploaded)), ("notImported", .array(notImported)),
                    ("dataFilesNotInCloud", .array(state.dataFiles.filter { !cloud.dataFiles.contains(ExactString($0)) }.map(JSONValue.string))),
                    ("otherBaselines", .array(otherBaselines)), ("differingRevisions", .array(differing)),
                ]))
        }
        var deleech: [JSONValue] = []
        func condition(_ code: Int64, _ reason: String, _ evidence: [(String, JSONValue)]) -> JSONValue {
            .object(JSONObject([("code", JSONValue(code)), ("reason", .string(reason)), ("evidence", .object(JSONObject(evidence)))]))
        }
        if let backendIdentity, JSONValue.string(backendIdentity) != state.info.backendIdentity {
            deleech.append(
                condition(202, "cloud identity changed", [("storedIdentity", state.info.backendIdentity), ("currentIdentity", .string(backendIdentity))]))
        }
        let mandatory = state.mandatoryIncompleteEvents
        if !mandatory.isEmpty {
            deleech.append(condition(203, "mandatory incomplete event", [("mandatoryIncompleteEvents", .array(mandatory.map(JSONValue.string)))]))
        }
        if cloud != nil, state.info.verifiesStoreRegistrationInCloud, !registrationIsDictionary {
            deleech.append(
                condition(
                    205, "store unregistered",
                    [
                        ("registrationFile", .string("stores/" + store)), ("present", .bool(registrationPresent)),
                        ("verifiesStoreRegistrationInCloud", .bool(true)),
                    ]))
        }
        return state.document(cloud: cloudValue, forcedDeleech: deleech)
    }
}

extension Ensemble {
    /// The state of one device's event-data folder (`path`: the ensemble folder
    /// `…/com.mentalfaculty.ensembles.eventdata/<ensemble>/`, or the event-data folder when it
    /// holds one ensemble), as the document of Spec/device-state.md 5: its store, backend
    /// identity, baseline, incomplete and stored events, data files and transit cache; with
    /// `cloud` (the cloud folder or its ensemble folder), what the device and the cloud lack of
    /// each other; with `backendIdentity` (the backend's current token), condition 202. Nothing
    /// is written beside the device's files.
    public static func inspectDevice(at path: String, cloud: String? = nil, backendIdentity: String? = nil) throws(EnsembleError) -> JSONValue {
        try deviceFacts(at: path, cloud: cloud, backendIdentity: backendIdentity).document
    }

    /// The device's state and its facts document (Spec/device-state.md 5).
    static func deviceFacts(at path: String, cloud: String?, backendIdentity: String?) throws(EnsembleError) -> (state: DeviceState, document: JSONValue) {
        do {
            let state = try DeviceState.read(path)
            let facts = try cloud.map { path throws(FormatError) in try DeviceInspection.readCloud(path, ensemble: state.folder.ensemble) }
            return (state, DeviceInspection.document(state, cloud: facts, backendIdentity: backendIdentity))
        } catch {
            throw deviceError(error)
        }
    }

    /// A path that is no device folder (or a missing cloud folder) is a wrong request; a device
    /// folder whose files cannot be read is unreadable.
    static func deviceError(_ error: FormatError) -> EnsembleError {
        EnsembleError(error.code == .eventDataNotDeviceFolder || error.code == .folderNotFound ? .usage : .unreadable, error)
    }

    /// Whether `path` is a device's event-data folder (an ensemble folder holding `events.sqlite`
    /// or `store.plist`, or a folder with one in it) rather than a cloud folder: what `inspect`
    /// reads it as (Spec/device-state.md 6.1).
    package static func looksLikeDeviceFolder(_ path: String) -> Bool {
        DeviceFolder.looksLikeDevice(path)
    }
}

extension Ensemble {
    /// Converts a device's event-data folder (as ``inspectDevice(at:cloud:backendIdentity:)``
    /// takes it) into the new v2 cloud folder `destination/<ensemble>/` (Spec/device-state.md 7):
    /// every complete event of its store (types 100, 200, 300; incomplete events are left out
    /// and named in the notes), a registration of each store whose events it holds, and the data files
    /// of `data/` (and those of `newdata/` an event references). Written as `convert` writes a
    /// folder: staged, read back and compared, renamed into place without replacing anything.
    public static func convertDevice(at path: String, to destination: String) throws(EnsembleError) -> ConversionReport {
        let state: DeviceState
        do {
            state = try DeviceState.read(path)
        } catch {
            var failure = EnsembleError(error.code == .eventDataNotDeviceFolder ? .usage : .unreadable, error)
            failure.readErrors = [error]
            throw failure
        }
        var events: [Converter.SourcedDeviceEvent] = []
        var notes: [String] = []
        let table = "ZCDESTOREMODIFICATIONEVENT"
        for event in state.events {
            guard event.type != 0 else {
                notes.append("incomplete event \(event.uniqueIdentifier) (type 0) left out: it is no event of the cloud")
                continue
            }
            let converted = event.v2Event()
            guard let v2 = converted.event else {
                let failure = FormatError(
                    .convertUnconvertible,
                    "event \(event.uniqueIdentifier): the property changes of object change \(converted.damagedChange ?? 0) cannot be read (damaged archive), so converting would lose them",
                    location: .init(
                        file: state.folder.eventStore, pointer: .root / "ZCDEOBJECTCHANGE" / String(converted.damagedChange ?? 0) / "ZPROPERTYCHANGEVALUES"))
                var error = EnsembleError(.unreadable, failure)
                error.readErrors = [failure]
                throw error
            }
            events.append(.init(event: v2, source: state.folder.eventStore, pointer: .root / table / String(event.primaryKey)))
        }
        // A registration for every store whose events are written: merge and verify need one
        // (205). The leech date is not kept on the device: the earliest save or merge of the
        // store stands for it (the reference date when it has none).
        var registrations: [(store: String, leechDate: Date)] = []
        for store in sortedUnique(events.map(\.event.storeIdentifier)) {
            let saves = state.events.filter { exactlyEqual($0.storeIdentifier, store) && ($0.type == 200 || $0.type == 300) }
            registrations.append((store, Date(timeIntervalSinceReferenceDate: saves.map(\.timestamp).min() ?? 0)))
        }
        let referenced = Set(state.events.flatMap { $0.changes.flatMap(\.dataFiles) }.map(ExactString.init))
        var dataFiles = state.dataFiles.map { (name: $0, path: state.folder.folder + "/data/" + $0) }
        let inData = Set(state.dataFiles.map(ExactString.init))
        dataFiles += state.newDataFiles.filter { referenced.contains(ExactString($0)) && !inData.contains(ExactString($0)) }.map {
            (name: $0, path: state.folder.folder + "/newdata/" + $0)
        }
        do {
            var summary = try Converter(reader: EventFileReader(), target: .v2, binary: false).writeEnsemble(
                state.folder.ensemble, events: events, registrations: registrations, dataFiles: dataFiles,
                destination: destination, source: state.folder.folder)
            summary.notes = notes + ["the registrations in stores/ give as leech date each store's first save or merge the device holds"]
            return ConversionReport(
                files: summary.files.map { ($0.source, $0.destination, $0.events) }, movedToDataFiles: summary.movedToDataFiles, skipped: [],
                notes: summary.notes)
        } catch {
            var failure = EnsembleError(kind: error.usage ? .usage : .unreadable, problems: error.errors.map(IntegrityProblem.init(readError:)))
            failure.readErrors = error.errors
            throw failure
        }
    }
}

extension FormatError.Code {
    /// `verify --device`: an event of the device's own store is in no file of the cloud
    /// (Spec/diagnostics.md 4.17d).
    public static let verifyDeviceNotUploaded = Self("verify.device-not-uploaded")
    /// `verify --device`: a cloud event or baseline the device has not imported (4.17d).
    public static let verifyDeviceNotImported = Self("verify.device-not-imported")
    /// `verify --device`: a condition under which the device deleeches itself holds (4.17d).
    public static let verifyDeviceDeleech = Self("verify.device-deleech")
    /// `verify --device`: a cloud baseline other than the one the device's store was built from (4.17e).
    public static let verifyDeviceOtherBaseline = Self("verify.device-other-baseline")
    /// `verify --device`: a revision the device and the cloud both hold with other contents (4.17e).
    public static let verifyDeviceRevisionDiffers = Self("verify.device-revision-differs")
}

extension Ensemble {
    /// A device's event-data folder (as ``inspectDevice(at:cloud:backendIdentity:)`` takes it)
    /// against the cloud folder `cloud`, as diagnostics (Spec/diagnostics.md 4.17d), built from
    /// the facts of Spec/device-state.md 5.6 and 5.7: events the device never uploaded, cloud
    /// events it has not imported, and each forced-deleech condition with its evidence.
    public static func verifyDevice(at path: String, cloud: String, backendIdentity: String? = nil) throws(EnsembleError) -> [Diagnostic] {
        deviceDiagnostics(try deviceFacts(at: path, cloud: cloud, backendIdentity: backendIdentity).document)
    }

    /// The diagnostics of a device's facts document against its cloud (4.17d, 4.17e).
    static func deviceDiagnostics(_ document: JSONValue) -> [Diagnostic] {
        func field(_ value: JSONValue?, _ key: String) -> JSONValue? { value?.objectValue?[key] }
        var diagnostics: [Diagnostic] = []
        let facts = field(document, "cloud")
        for event in field(facts, "neverUploaded")?.arrayValue ?? [] {
            let identifier = field(event, "uniqueIdentifier")?.stringValue ?? ""
            let cached = field(event, "inUploadCache") == .bool(true)
            diagnostics.append(
                Diagnostic(
                    code: .verifyDeviceNotUploaded, severity: .warning, number: nil, files: [field(event, "file")?.stringValue ?? ""],
                    reason: "the device holds event \(identifier) of its own store, which no file of the cloud holds",
                    consequence: cached
                        ? "it waits in the device's upload cache: the next sync should upload it"
                        : "it is not in the upload cache: the device uploads it at its next merge; until then only this device has it, and a deleech loses it",
                    details: JSONObject([("uniqueIdentifier", .string(identifier)), ("inUploadCache", .bool(cached))])))
        }
        for event in field(facts, "notImported")?.arrayValue ?? [] {
            let identifier = field(event, "uniqueIdentifier")?.stringValue ?? ""
            let cached = field(event, "inDownloadCache") == .bool(true)
            diagnostics.append(
                Diagnostic(
                    code: .verifyDeviceNotImported, severity: .info, number: nil, files: [field(event, "file")?.stringValue ?? ""],
                    reason: "the cloud holds event \(identifier), which the device has not imported",
                    consequence: cached
                        ? "it is in the device's download cache: the device imports it at its next merge"
                        : "the device downloads and imports it at its next merge, if merge.md 15 lets it integrate it",
                    details: JSONObject([("uniqueIdentifier", .string(identifier)), ("inDownloadCache", .bool(cached))])))
        }
        let builtFrom = field(document, "baselineUsedToConstructStore")?.stringValue ?? ""
        for baseline in field(facts, "otherBaselines")?.arrayValue ?? [] {
            let identifier = field(baseline, "uniqueIdentifier")?.stringValue ?? ""
            diagnostics.append(
                Diagnostic(
                    code: .verifyDeviceOtherBaseline, severity: .info, number: nil, files: [field(baseline, "file")?.stringValue ?? ""],
                    reason: "the cloud holds baseline \(identifier); the device's store was built from baseline \(builtFrom)",
                    consequence:
                        "at its next merge the device imports it, deletes the events it covers and integrates in full: its store is rebuilt from this baseline and the events above it, and objects no replayed insert names are deleted",
                    details: JSONObject([("uniqueIdentifier", .string(identifier)), ("builtFrom", .string(builtFrom))])))
        }
        for revision in field(facts, "differingRevisions")?.arrayValue ?? [] {
            let store = field(revision, "storeIdentifier")?.stringValue ?? ""
            let number = field(revision, "revision")?.numberValue?.int64Value ?? 0
            let sameName = field(revision, "sameName") == .bool(true)
            diagnostics.append(
                Diagnostic(
                    code: .verifyDeviceRevisionDiffers, severity: .warning, number: nil, files: [field(revision, "file")?.stringValue ?? ""],
                    reason: "the device and the cloud both hold revision \(number) of store \(store), with other contents",
                    consequence: sameName
                        ? "the device never reads a cloud file with its own name for an event: it keeps its copy while every other device applies the cloud's, and their stores differ for good"
                        : "the device imports the cloud's copy as a second event of that revision: each lookup of the revision then finds none, and a merge whose events name it fails with 201",
                    details: JSONObject(
                        ["storeIdentifier", "revision", "uniqueIdentifier", "cloudUniqueIdentifier", "sameName"].map { ($0, field(revision, $0) ?? .null) })))
        }
        for condition in field(document, "forcedDeleech")?.arrayValue ?? [] {
            let number = field(condition, "code")?.numberValue?.int64Value ?? 0
            let reason = field(condition, "reason")?.stringValue ?? ""
            let evidence = field(condition, "evidence")?.objectValue ?? JSONObject()
            let file = number == 205 ? [field(.object(evidence), "registrationFile")?.stringValue ?? ""] : []
            diagnostics.append(
                Diagnostic(
                    code: .verifyDeviceDeleech, severity: .error, number: Int(number), files: file,
                    reason: "the device deleeches itself: \(reason) (\(number)); "
                        + evidence.members.map { "\($0.key) \(JSONWriter().string($0.value))" }.joined(separator: ", "),
                    consequence:
                        "at its next launch or merge the device removes its event data and leaves the ensemble; what it never uploaded is lost, and it must leech again",
                    details: JSONObject([("reason", .string(reason))] + evidence.members.map { ($0.key, $0.value) })))
        }
        return diagnostics
    }
}
