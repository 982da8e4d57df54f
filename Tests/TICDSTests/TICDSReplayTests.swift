import DataModel
import EnsembleModel
@testable import EnsemblesToolkit
import Foundation
import JSONDocument
import KeyedArchive
import MergeEngine
@testable import TICDS
import Testing

/// `merge` of a TICoreDataSync document (Spec/ticds.md 10) against the replays the independent
/// generator `scripts/ticds-generate.py` wrote into each case's `facts.json` (`replays`): the
/// order, the warnings, where it stops, the state there or at the end, and both answers to a
/// conflict. Nothing expected here comes from the toolkit.
@Suite("TICDS replay")
struct TICDSReplayTests {
    typealias Facts = TICDSFactsTests

    /// The Notebook model of the fixtures (`Fixtures/ticds/Notebook.xcdatamodel`, Xcode's XML form).
    static let modelPath = Facts.fixtures.appendingPathComponent("Notebook.xcdatamodel").path

    static func model() throws -> DataModel { try ModelBundle(path: modelPath).load() }

    /// An object as the facts write it: attributes by name, to-many relationships as sorted ids.
    struct Object: Equatable, CustomStringConvertible {
        var attributes: [String: String]
        var relationships: [String: [String]]
        var description: String { "\(attributes) \(relationships)" }
    }

    typealias State = [String: [String: Object]]

    /// A facts state (`{"Note": {id: {"attributes", "relationships"}}, "Tag": ...}`).
    static func state(facts value: JSONValue?) -> State {
        var state: State = [:]
        for (entity, objects) in value?.objectValue?.members ?? [] {
            var list: [String: Object] = [:]
            for (id, object) in objects.objectValue?.members ?? [] {
                var attributes: [String: String] = [:]
                for (name, text) in Facts.member(object, "attributes")?.objectValue?.members ?? [] { attributes[name] = text.stringValue ?? "?" }
                var relationships: [String: [String]] = [:]
                for (name, members) in Facts.member(object, "relationships")?.objectValue?.members ?? [] {
                    relationships[name] = (members.arrayValue ?? []).compactMap(\.stringValue).sorted()
                }
                list[id] = Object(attributes: attributes, relationships: relationships)
            }
            state[entity] = list
        }
        return state
    }

    /// The replay's objects in the facts' form (every entity of the model present).
    static func state(_ replay: TICDSReplay) -> State {
        var state: State = [:]
        for entity in replay.model.entityNames { state[entity] = [:] }
        for (key, object) in replay.objects {
            var attributes: [String: String] = [:]
            for (name, value) in object.attributes {
                if case .string(let text) = value { attributes[name] = text } else { attributes[name] = "\(value)" }
            }
            let relationships = object.toMany.mapValues { $0.map(\.syncID).sorted() }
            state[key.entity, default: [:]][key.syncID] = Object(attributes: attributes, relationships: relationships)
        }
        return state
    }

    /// A merge's state document (Spec/merge.md 9) in the facts' form: arrays are to-many
    /// relationships, strings attributes; entities without objects are absent from the document.
    static func state(document: JSONValue, model: DataModel) -> State {
        var state: State = [:]
        for entity in model.entityNames { state[entity] = [:] }
        for (entity, objects) in Facts.member(document, "entities")?.objectValue?.members ?? [] {
            for (id, properties) in objects.objectValue?.members ?? [] {
                var object = Object(attributes: [:], relationships: [:])
                for (name, value) in properties.objectValue?.members ?? [] {
                    if let members = value.arrayValue {
                        object.relationships[name] = members.compactMap(\.stringValue).sorted()
                    } else {
                        object.attributes[name] = value.stringValue ?? "\(value)"
                    }
                }
                state[entity, default: [:]][id] = object
            }
        }
        return state
    }

    /// Every (case, document, WholeStore client) with a replay in the facts. `wrong-password`'s
    /// replays assume the folder's own password, as the facts say.
    static let replays: [String] = Facts.cases.flatMap { name -> [String] in
        guard let data = try? Data(contentsOf: Facts.fixtures.appendingPathComponent("\(name)/facts.json")),
            let facts = try? JSONParser.parse(Array(data))
        else { return [] }
        return (Facts.member(facts, "documents")?.arrayValue ?? []).flatMap { document in
            (Facts.member(document, "replays")?.objectValue?.members ?? []).map { "\(name)/\(Facts.text(Facts.member(document, "id")) ?? "")/\($0.0)" }
        }
    }

    static func ensemble(_ root: URL, facts: JSONValue, document: String) throws -> Ensemble {
        var options = Ensemble.Options(model: try model())
        if let password = Facts.text(Facts.member(facts, "encryption", "password")) { options.password = PasswordSource(password: password) }
        let app = root.appendingPathComponent(Facts.text(Facts.member(facts, "root")) ?? "")
        return Ensemble(at: app.appendingPathComponent("Documents/\(document)"), options: options)
    }

    @Test("the fixtures hold replays")
    func present() {
        #expect(Self.replays.count >= 20)
    }

    @Test("merge replays as the generator says the framework would: order, warnings, stop, state", arguments: replays)
    func replay(_ id: String) throws {
        let parts = id.split(separator: "/").map(String.init)
        let (name, document, client) = (parts[0], parts[1], parts[2])
        let (root, facts) = try Facts.prepare(name)
        defer { try? FileManager.default.removeItem(at: root) }
        let prefix = (Facts.text(Facts.member(facts, "root")) ?? "") + "/"
        let doc = (Facts.member(facts, "documents")?.arrayValue ?? []).first { Facts.member($0, "id") == .string(document) }
        let expected = try #require(Facts.member(doc, "replays", client))
        let ensemble = try Self.ensemble(root, facts: facts, document: document)
        let replay = try ensemble.replayTICDS(asClient: client)

        #expect(replay.wholeStoreClient == client)
        let order = replay.order.map { [$0.client, $0.identifier, String(Int64($0.file.modified))] }
        let expectedOrder = (Facts.member(expected, "order")?.arrayValue ?? []).map { set in
            [
                Facts.text(Facts.member(set, "client")) ?? "", Facts.text(Facts.member(set, "id")) ?? "",
                String(Int64(Facts.number(Facts.member(set, "date")) ?? -1)),
            ]
        }
        #expect(order == expectedOrder, "\(id): order")

        let warnings = replay.warnings.map { warning in
            [
                warning.code.rawValue.replacingOccurrences(of: "ticds.", with: ""), warning.set, warning.changeType.map(String.init) ?? "",
                warning.entity ?? "", warning.syncID ?? "", warning.key ?? "null",
            ]
        }
        let expectedWarnings = (Facts.member(expected, "warnings")?.arrayValue ?? []).map { warning in
            [
                Facts.text(Facts.member(warning, "kind")) ?? "", Facts.text(Facts.member(warning, "set")) ?? "",
                String(Int64(Facts.number(Facts.member(warning, "changeType")) ?? -1)), Facts.text(Facts.member(warning, "entity")) ?? "",
                Facts.text(Facts.member(warning, "syncID")) ?? "", Facts.text(Facts.member(warning, "key")) ?? "null",
            ]
        }
        #expect(warnings == expectedWarnings, "\(id): warnings")

        let stoppedAt = Facts.member(expected, "stoppedAt") ?? .null
        if stoppedAt == .null {
            #expect(replay.stop == nil, "\(id): \(replay.stop?.message ?? "")")
            #expect(Self.state(replay) == Self.state(facts: Facts.member(expected, "state")), "\(id): state")
            // The state document of `merge` (Spec/merge.md 9) says the same.
            let document = try replay.storeState().document()
            #expect(Self.state(document: document, model: replay.model) == Self.state(facts: Facts.member(expected, "state")), "\(id): state document")
            return
        }
        let stop = try #require(replay.stop, "\(id): the replay does not stop")
        #expect(Self.state(replay) == Self.state(facts: Facts.member(expected, "stateAtStop")), "\(id): state at the stop")
        switch Facts.text(Facts.member(stoppedAt, "kind")) {
        case "conflict":
            #expect(stop.code == .ticdsConflict, "\(id)")
            for field in ["set", "client", "otherSet", "otherClient", "entity", "syncID", "key", "localSet", "remoteSet", "localValue", "remoteValue"] {
                #expect(stop.details[field] == Facts.member(stoppedAt, field), "\(id): \(field)")
            }
            // Both answers the app can give.
            for (answer, remoteWins) in [("remote", true), ("local", false)] {
                let resolved = try ensemble.replayTICDS(asClient: client, remoteWins: remoteWins)
                #expect(resolved.stop == nil, "\(id) \(answer)")
                #expect(Self.state(resolved) == Self.state(facts: Facts.member(expected, "resolved", answer)), "\(id): resolved \(answer)")
            }
        case let kind:
            #expect(stop.code == (kind == "binary-store-set" ? .ticdsStoppedAtBinaryStore : .ticdsStoppedAtUnreadableSet), "\(id)")
            #expect(stop.details["set"] == Facts.member(stoppedAt, "set"), "\(id)")
            #expect(stop.details["client"] == Facts.member(stoppedAt, "client"), "\(id)")
            #expect(stop.details["modified"]?.numberValue?.doubleValue == Facts.number(Facts.member(stoppedAt, "date")), "\(id)")
            #expect(stop.details["size"]?.numberValue?.doubleValue == Facts.number(Facts.member(stoppedAt, "size")), "\(id)")
            let file = Facts.text(Facts.member(stoppedAt, "file")) ?? ""
            #expect(stop.files == [file.hasPrefix(prefix) ? String(file.dropFirst(prefix.count)) : file], "\(id)")
        }
    }

    @Test("same-dates: with --dates from the dates the files had, the replays are those of withOriginalDates")
    func replayWithDatesFile() throws {
        let (root, facts) = try Facts.prepare("same-dates", settingDates: false)
        defer { try? FileManager.default.removeItem(at: root) }
        let app = (Facts.text(Facts.member(facts, "root")) ?? "") + "/"
        let original = try #require(Facts.member(facts, "withOriginalDates"))
        let dates = JSONObject(
            (Facts.member(original, "fileDates")?.objectValue?.members ?? []).compactMap { path, date in
                path.hasPrefix(app) ? (String(path.dropFirst(app.count)), date) : nil
            })
        let datesFile = root.appendingPathComponent("dates.json")
        try Data(JSONWriter().bytes(.object(dates))).write(to: datesFile)
        var checked = 0
        for document in Facts.member(original, "documents")?.arrayValue ?? [] {
            let id = try #require(Facts.text(Facts.member(document, "id")))
            for (client, expected) in Facts.member(document, "replays")?.objectValue?.members ?? [] {
                let replay = try Self.ensemble(root, facts: facts, document: id).replayTICDS(asClient: client, datesFile: datesFile.path)
                let expectedOrder = (Facts.member(expected, "order")?.arrayValue ?? []).compactMap { Facts.text(Facts.member($0, "id")) }
                #expect(replay.order.map(\.identifier) == expectedOrder, "\(client)")
                #expect(replay.warnings.isEmpty == (Facts.member(expected, "warnings")?.arrayValue?.isEmpty ?? true), "\(client)")
                #expect(Self.state(replay) == Self.state(facts: Facts.member(expected, "state")), "\(client)")
                checked += 1
            }
        }
        #expect(checked >= 2)
    }

    @Test("the fixtures' Notebook model names the entities and properties of the real elements model")
    func modelMatchesTheRealOne() throws {
        let elements = Facts.fixtures.deletingLastPathComponent()
            .appendingPathComponent("external/ticoredatasync/Examples/Notebook/Notebook/Notebook.xcdatamodeld/Notebook.xcdatamodel/elements")
        let archive = try KeyedArchiveReader(classes: .xcodeModel).read(Array(try Data(contentsOf: elements)))
        let package = try #require(archive.root?[member: "_xd_rootPackage"])
        var real: [String: Set<String>] = [:]
        for pair in try #require(package[member: "XDBucketForClassesstorage"]?.pairs) {
            guard let name = pair.key.string, case .object(let entity) = pair.value, entity.className == "XDPMEntity" else { continue }
            real[name] = Set((entity.members["XDBucketForOwnedAttributesstorage"]?.pairs ?? []).compactMap { $0.key.string })
        }
        let model = try Self.model()
        var mine: [String: Set<String>] = [:]
        for name in model.entityNames {
            let described = Facts.member(model.descriptionDocument, "entities", name)
            mine[name] = Set(
                (Facts.member(described, "attributes")?.objectValue?.members ?? []).map(\.0)
                    + (Facts.member(described, "relationships")?.objectValue?.members ?? []).map(\.0))
        }
        #expect(mine == real)
        #expect(real["Note"]?.contains("ticdsSyncID") == true)
    }

    @Test("merge needs the model; an application folder with two documents and a WholeStore tie are usage errors")
    func usage() throws {
        let (root, facts) = try Facts.prepare("healthy")
        defer { try? FileManager.default.removeItem(at: root) }
        let app = root.appendingPathComponent(Facts.text(Facts.member(facts, "root")) ?? "")
        func code(_ body: () throws(EnsembleError) -> Void) -> String? {
            do throws(EnsembleError) {
                try body()
                return nil
            } catch {
                #expect(error.kind == .usage)
                return error.problems.first?.code.rawValue
            }
        }
        let document = try #require(Facts.text(Facts.member(facts, "documents", "0", "id")))
        var warnings: [FormatError] = []
        let model = try Self.model()
        let withoutModel = Ensemble(at: app.appendingPathComponent("Documents/\(document)"))
        #expect(code { () throws(EnsembleError) in _ = try withoutModel.mergeTICDS(warnings: &warnings) } == "ticds.model-required")
        let wholeApp = Ensemble(at: app, options: .init(model: model))
        #expect(code { () throws(EnsembleError) in _ = try wholeApp.mergeTICDS(warnings: &warnings) } == "ticds.several-documents")
        let ensemble = try Self.ensemble(root, facts: facts, document: document)
        #expect(code { () throws(EnsembleError) in _ = try ensemble.mergeTICDS(asClient: "nobody", warnings: &warnings) } == "ticds.no-such-client")
        // The download choice: the WholeStore with the latest date (facts: wholeStoreDownloadWouldTake).
        let takes = Facts.text(Facts.member(facts, "documents", "0", "wholeStoreDownloadWouldTake"))
        #expect(try ensemble.replayTICDS().wholeStoreClient == takes)
        // Two WholeStores of one date: the choice is the user's.
        for whole in Facts.member(facts, "documents", "0", "wholeStores")?.arrayValue ?? [] {
            let path = try #require(Facts.text(Facts.member(whole, "file")))
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 1_800_000_000)], ofItemAtPath: root.appendingPathComponent(path).path)
        }
        #expect(code { () throws(EnsembleError) in _ = try ensemble.mergeTICDS(warnings: &warnings) } == "ticds.whole-store-ambiguous")
    }

    @Test("a wrong password stops merge with one ticds.wrong-password, a usage error")
    func wrongPassword() throws {
        let (root, facts) = try Facts.prepare("wrong-password")
        defer { try? FileManager.default.removeItem(at: root) }
        let document = try #require(Facts.text(Facts.member(facts, "documents", "0", "id")))
        var options = Ensemble.Options(model: try Self.model())
        options.password = PasswordSource(password: try #require(Facts.text(Facts.member(facts, "encryption", "passwordToUse"))))
        let app = root.appendingPathComponent(Facts.text(Facts.member(facts, "root")) ?? "")
        var warnings: [FormatError] = []
        do throws(EnsembleError) {
            _ = try Ensemble(at: app.appendingPathComponent("Documents/\(document)"), options: options).mergeTICDS(warnings: &warnings)
            Issue.record("merged with a wrong password")
        } catch {
            #expect(error.kind == .usage)
            #expect(error.problems.map(\.code) == [.ticdsWrongPassword])
        }
    }
}

/// Objects of a replay keyed by the bytes of their sync IDs (Spec/ticds.md 2.2, 10.5), on a
/// document built in memory.
@Suite("TICDS replay: sync IDs by their bytes")
struct TICDSReplayTwinTests {
    /// A set of `client` changing the `title` of the note `syncID` to `title`.
    static func titleSet(_ client: String, _ identifier: String, syncID: String, title: String, modified: Double) -> TICDSChangeSet {
        let change = TICDSChange(
            primaryKey: 1, changeType: 2, entity: "Note", syncID: syncID, relevantKey: "title", relatedEntity: nil, localTimeStamp: 1,
            changedAttributes: .string(title), changedRelationships: .null, damagedPayload: nil)
        return TICDSChangeSet(
            client: client, identifier: identifier, file: TICDSFile(path: "SyncChanges/\(client)/\(identifier).syncchg", size: 1, modified: modified),
            form: .sqlite, changes: [change], error: nil)
    }

    @Test("replayed objects are keyed by the bytes of entity and sync ID, and ordered by them")
    func objectKeysByBytes() {
        let composed = TICDSObjectKey(entity: "Note", syncID: "caf\u{E9}"), decomposed = TICDSObjectKey(entity: "Note", syncID: "cafe\u{301}")
        #expect(composed != decomposed)
        var keys: Set<TICDSObjectKey> = [composed]
        keys.insert(decomposed)
        #expect(keys.count == 2)
        // "cafe" + U+0301 comes first in byte order (0x65 < 0xC3), for sync IDs and for entities
        // (whose twins decide before the sync IDs, which sort the other way).
        #expect(decomposed < composed && !(composed < decomposed) && !(composed < composed))
        let first = TICDSObjectKey(entity: "Cafe\u{301}", syncID: "b"), second = TICDSObjectKey(entity: "Caf\u{E9}", syncID: "a")
        #expect(first < second && !(second < first))
    }

    @Test("a local change to one note and a remote change to its twin in another normalisation are no conflict: two notes, two titles")
    func twinSyncIDs() throws {
        let composed = TICDSObjectKey(entity: "Note", syncID: "caf\u{E9}"), decomposed = TICDSObjectKey(entity: "Note", syncID: "cafe\u{301}")
        // The local client has applied a remote set spelt with U+00C9, not its twin spelt with
        // E + U+0301, which comes after the local set.
        let whole = TICDSWholeStore(
            client: "local", file: nil, layers: [], store: nil, storeError: nil, appliedFile: nil,
            applied: [TICDSAppliedSet(identifier: "S-\u{C9}", client: "remote", creationDate: 0)], appliedError: nil)
        let sets = [
            Self.titleSet("local", "S-1", syncID: composed.syncID, title: "mine", modified: 10),
            Self.titleSet("remote", "S-\u{C9}", syncID: decomposed.syncID, title: "applied before", modified: 5),
            Self.titleSet("remote", "S-E\u{301}", syncID: decomposed.syncID, title: "theirs", modified: 20),
        ]
        let document = TICDSDocument(
            identifier: "DOC", path: ".", infoFile: nil, description: nil, integrityKeys: nil, syncClients: ["local", "remote"], sets: sets,
            otherSyncFiles: [], wholeStores: [whole], recentSyncs: [], temporaryFiles: [], deletedClients: [])
        // One key at a time: with keys equal as canonical equivalents a literal of both would trap.
        var start: [TICDSObjectKey: TICDSReplayObject] = [composed: TICDSReplayObject()]
        start[decomposed] = TICDSReplayObject()
        #expect(start.count == 2)
        let replay = TICDSReplayer.replay(document, whole: whole, start: start, model: try TICDSReplayTests.model(), remoteWins: nil)
        #expect(replay.stop == nil)
        #expect(replay.order.count == 2 && exactlyEqual(replay.order.map(\.identifier), ["S-1", "S-E\u{301}"]))
        #expect(replay.objects.count == 2)
        #expect(replay.objects[composed]?.attributes["title"] == .string("mine"))
        #expect(replay.objects[decomposed]?.attributes["title"] == .string("theirs"))
    }
}
