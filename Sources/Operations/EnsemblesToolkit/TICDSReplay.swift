import CoreDataStore
import DataModel
import EnsembleModel
import EventCodecs
import Foundation
import JSONDocument
import MergeEngine
import SQLiteConnection
import TICDS

extension FormatError.Code {
    /// `merge` of a TICoreDataSync folder stopped at a set in Apple's binary store form, which
    /// only Apple's Core Data reads (Spec/ticds.md 10.4).
    public static let ticdsStoppedAtBinaryStore = Self("ticds.stopped-at-binary-store")
    /// `merge` of a TICoreDataSync folder stopped at a set that cannot be read (Spec/ticds.md 10.4).
    public static let ticdsStoppedAtUnreadableSet = Self("ticds.stopped-at-unreadable-set")
    /// `merge` of a TICoreDataSync folder stopped where the framework asks the app to resolve a
    /// conflict (Spec/ticds.md 10.5).
    public static let ticdsConflict = Self("ticds.conflict")
    /// A warning of the replay: a change to an object the state does not hold (Spec/ticds.md 10.3).
    public static let ticdsObjectNotFound = Self("ticds.object-not-found")
    /// A warning of the replay: a relationship change naming an object the state does not hold
    /// (Spec/ticds.md 10.3).
    public static let ticdsRelatedObjectNotFound = Self("ticds.related-object-not-found")
    /// `merge` of a TICoreDataSync folder without the app's model (Spec/ticds.md 10.2). Usage error.
    public static let ticdsModelRequired = Self("ticds.model-required")
    /// `merge` of an application folder with several documents (Spec/ticds.md 10.1). Usage error.
    public static let ticdsSeveralDocuments = Self("ticds.several-documents")
    /// `merge` without `--as-client` where several WholeStores have the latest date (Spec/ticds.md
    /// 10.1). Usage error.
    public static let ticdsWholeStoreAmbiguous = Self("ticds.whole-store-ambiguous")
}

/// An object of a replay: its entity and `ticdsSyncID` (Spec/ticds.md 10.2), equal and ordered
/// by their bytes: sync IDs that differ only in Unicode normalisation are two objects, as the
/// framework's string comparisons and SQLite's tell them apart.
package struct TICDSObjectKey: Hashable, Sendable, Comparable {
    package var entity: String
    package var syncID: String

    package static func == (a: Self, b: Self) -> Bool { exactlyEqual(a.entity, b.entity) && exactlyEqual(a.syncID, b.syncID) }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(ExactString(entity))
        hasher.combine(ExactString(syncID))
    }

    package static func < (a: Self, b: Self) -> Bool {
        !exactlyEqual(a.entity, b.entity) ? utf8Precedes(a.entity, b.entity) : utf8Precedes(a.syncID, b.syncID)
    }
}

/// An object's properties during a replay. Every relationship of its entity is present (empty
/// or nil when it holds nothing); attributes only once set.
package struct TICDSReplayObject: Sendable, Equatable {
    package var attributes: [String: AttributeValue] = [:]
    package var toOne: [String: TICDSObjectKey?] = [:]
    package var toMany: [String: Set<TICDSObjectKey>] = [:]
}

/// What the replay of a TICoreDataSync document did (Spec/ticds.md 10).
package struct TICDSReplay: Sendable {
    /// A change the replay skipped (Spec/ticds.md 10.3).
    package struct Warning: Sendable, Hashable {
        package var code: FormatError.Code
        package var set: String
        package var file: String
        package var changeType: Int64?
        package var entity: String?
        package var syncID: String?
        package var key: String?
    }

    package var document: String
    package var wholeStoreClient: String
    /// The sets to apply, in the framework's order, whether or not the replay reached them.
    package var order: [TICDSChangeSet]
    package var warnings: [Warning]
    /// Why the replay stopped; nil when it applied every set.
    package var stop: IntegrityProblem?
    /// The state at the end, or before the set the replay stopped at.
    package var objects: [TICDSObjectKey: TICDSReplayObject]
    package var model: DataModel

    /// The state as a merge's (Spec/merge.md 9): one baseline event inserting every object with
    /// every property it holds, applied with the model.
    package func storeState() -> StoreState {
        var changes: [ObjectChange] = []
        for (key, object) in objects.sorted(by: { $0.key < $1.key }) {
            var properties = object.attributes.map { PropertyChange(name: $0.key, value: .attribute($0.value)) }
            properties += object.toOne.map { PropertyChange(name: $0.key, value: .toOne(relatedIdentifier: $0.value?.syncID)) }
            properties += object.toMany.map { PropertyChange(name: $0.key, value: .toMany(added: $0.value.map(\.syncID), removed: [])) }
            changes.append(ObjectChange(entity: key.entity, globalIdentifier: key.syncID, type: .insert, propertyChanges: properties))
        }
        var state = StoreState(model: model)
        state.apply(
            Event(
                uniqueIdentifier: "ticds-replay", type: .baseline, storeIdentifier: wholeStoreClient, revision: 0, globalCount: 0, timestamp: 0,
                objectChanges: changes))
        return state
    }

    /// The warnings as the command line writes them.
    package var warningErrors: [FormatError] {
        warnings.map { warning in
            let object = "\(warning.entity ?? "?") \(warning.syncID ?? "?")"
            let what =
                warning.code == .ticdsObjectNotFound
                ? "a change of type \(warning.changeType.map(String.init) ?? "?") to \(object), which the state does not hold, was skipped"
                : "a change of \(warning.key ?? "?") of \(object) names an object the state does not hold and was skipped"
            return FormatError(warning.code, "set \(warning.set): \(what)", location: .init(file: warning.file))
        }
    }
}

/// The replay of Spec/ticds.md 10: a WholeStore's objects, then every set its client had not
/// applied, in the framework's order.
enum TICDSReplayer {
    /// The objects of a WholeStore as the replay starts from them (Spec/ticds.md 10.2): rows of
    /// entities with a `ticdsSyncID`, NULL attributes left out.
    static func objects(_ contents: CoreDataStoreContents, model: DataModel) -> [TICDSObjectKey: TICDSReplayObject] {
        var keys: [CoreDataObjectID: TICDSObjectKey] = [:]
        for (entity, rows) in contents.rows {
            for row in rows {
                if case .text(let id)? = row.attributes["ticdsSyncID"] { keys[row.id] = TICDSObjectKey(entity: entity, syncID: id) }
            }
        }
        var objects: [TICDSObjectKey: TICDSReplayObject] = [:]
        for (entity, rows) in contents.rows {
            for row in rows {
                guard let key = keys[row.id] else { continue }
                var object = fresh(entity, model: model)
                for (name, stored) in row.attributes {
                    if case .null = stored { continue }
                    object.attributes[name] = value(stored, type: attributeType(name, of: entity, model: model))
                }
                for (name, target) in row.toOne { object.toOne.updateValue(keys[target], forKey: name) }
                for (name, members) in row.toMany { object.toMany[name] = Set(members.compactMap { keys[$0] }) }
                objects[key] = object
            }
        }
        return objects
    }

    static func attributeType(_ name: String, of entity: String, model: DataModel) -> AttributeType? {
        if case .attribute(let attribute)? = model.property(name, of: entity) { return attribute.type }
        return nil
    }

    /// An object with every relationship of its entity empty.
    static func fresh(_ entity: String, model: DataModel) -> TICDSReplayObject {
        var object = TICDSReplayObject()
        for ancestor in model.lineage(of: entity) {
            for relationship in ancestor.relationships.values where !relationship.isTransient {
                if relationship.isToMany {
                    object.toMany[relationship.name] = []
                } else {
                    object.toOne.updateValue(nil, forKey: relationship.name)
                }
            }
        }
        return object
    }

    static let secondsFrom1970To2001 = 978_307_200.0

    /// A stored column as the model's attribute type reads it (Core Data stores dates as seconds
    /// since 2001).
    static func value(_ stored: SQLValue, type: AttributeType?) -> AttributeValue {
        switch (stored, type) {
        case (.null, _): .null
        case (.integer(let number), .boolean?): .bool(number != 0)
        case (.integer(let number), .double?), (.integer(let number), .float?): .double(Double(number))
        case (.integer(let number), .date?): .date(millisecondsSince1970: (Double(number) + secondsFrom1970To2001) * 1000)
        case (.integer(let number), _): .integer(number)
        case (.real(let number), .date?): .date(millisecondsSince1970: (number + secondsFrom1970To2001) * 1000)
        case (.real(let number), _): .double(number)
        case (.text(let text), .decimal?): .decimal(text)
        case (.text(let text), .uuid?): UUID(uuidString: text).map(AttributeValue.uuid) ?? .string(text)
        case (.text(let text), .uri?): .url(text)
        case (.text(let text), _): .string(text)
        case (.blob(let bytes), _): .binary(Data(bytes))
        }
    }

    /// A change set's value (a keyed archive's root as JSON, Spec/ticds.md 4.3) as the model's
    /// attribute type reads it.
    static func value(_ json: JSONValue, type: AttributeType?) -> AttributeValue {
        switch json {
        case .null, .array, .object: return .null
        case .bool(let flag): return .bool(flag)
        case .string(let text):
            switch type {
            case .binary?, .transformable?: return Data(base64Encoded: text).map(AttributeValue.binary) ?? .string(text)
            case .uuid?: return UUID(uuidString: text).map(AttributeValue.uuid) ?? .string(text)
            case .uri?: return .url(text)
            case .decimal?: return .decimal(text)
            default: return .string(text)
            }
        case .number(let number):
            switch type {
            case .date?: return .date(millisecondsSince1970: (number.doubleValue + secondsFrom1970To2001) * 1000)
            case .boolean?: return .bool(number.doubleValue != 0)
            case .double?, .float?: return .double(number.doubleValue)
            case .decimal?: return .decimal(number.text)
            default: return number.int64Value.map(AttributeValue.integer) ?? .double(number.doubleValue)
            }
        }
    }

    /// The state while replaying, with the model that says what each relationship's inverse is.
    /// Its own, not the merge engine's StoreState: a TICoreDataSync change names one relationship
    /// member at a time and is skipped, with a warning, when either object is missing
    /// (Spec/ticds.md 10.3), where an Ensembles event sets whole values and creates what it
    /// names (merge.md 7); the result becomes a StoreState through a baseline once the replay ends.
    struct State {
        var objects: [TICDSObjectKey: TICDSReplayObject]
        let model: DataModel
        var warnings: [TICDSReplay.Warning] = []

        func relationship(_ name: String, of entity: String) -> Relationship? {
            if case .relationship(let relationship)? = model.property(name, of: entity) { return relationship }
            return nil
        }

        /// `holder`'s relationship `name` no longer holds `member`.
        mutating func remove(_ member: TICDSObjectKey, from holder: TICDSObjectKey, _ name: String) {
            guard var object = objects[holder] else { return }
            object.toMany[name]?.remove(member)
            if object.toOne[name] == .some(member) { object.toOne.updateValue(nil, forKey: name) }
            objects[holder] = object
        }

        /// `a`'s relationship `name` gains `b` (to-many) or becomes `b` (to-one); the inverse
        /// follows, as Core Data keeps it (Spec/ticds.md 10.3).
        mutating func attach(_ a: TICDSObjectKey, _ name: String, _ b: TICDSObjectKey, toMany: Bool) {
            let inverse = relationship(name, of: a.entity)?.inverseName
            if toMany {
                objects[a]?.toMany[name, default: []].insert(b)
            } else {
                if let old = objects[a]?.toOne[name] ?? nil, old != b, let inverse { remove(a, from: old, inverse) }
                objects[a]?.toOne.updateValue(b, forKey: name)
            }
            guard let inverse, let back = relationship(inverse, of: b.entity) else { return }
            if back.isToMany {
                objects[b]?.toMany[inverse, default: []].insert(a)
            } else {
                if let old = objects[b]?.toOne[inverse] ?? nil, old != a { remove(b, from: old, name) }
                objects[b]?.toOne.updateValue(a, forKey: inverse)
            }
        }

        /// `a`'s relationship `name` loses `b`; the inverse follows.
        mutating func detach(_ a: TICDSObjectKey, _ name: String, _ b: TICDSObjectKey) {
            remove(b, from: a, name)
            if let inverse = relationship(name, of: a.entity)?.inverseName { remove(a, from: b, inverse) }
        }

        /// Deletes `key` and takes it out of every relationship that holds it. Through an inverse,
        /// only the objects `key` itself holds can hold it (attach and detach keep both sides, as
        /// the store does), so only relationships without an inverse are looked for in every
        /// object: a delete costs what the object holds, not the size of the state.
        mutating func delete(_ key: TICDSObjectKey) {
            guard let object = objects.removeValue(forKey: key) else { return }
            for (name, targets) in object.toMany {
                guard let inverse = relationship(name, of: key.entity)?.inverseName else { continue }
                for target in targets { remove(key, from: target, inverse) }
            }
            for (name, target) in object.toOne {
                guard let target, let inverse = relationship(name, of: key.entity)?.inverseName else { continue }
                remove(key, from: target, inverse)
            }
            var oneSided: [(entity: String, name: String)] = []
            for entity in model.entities.values {
                for (name, relationship) in entity.relationships
                where relationship.inverseName == nil && model.entity(key.entity, isKindOf: relationship.destinationEntity) {
                    oneSided.append((entity.name, name.value))
                }
            }
            guard !oneSided.isEmpty else { return }
            for other in Array(objects.keys) {
                for (entity, name) in oneSided where model.entity(other.entity, isKindOf: entity) { remove(key, from: other, name) }
            }
        }

        /// Applies one change of `set` (Spec/ticds.md 10.3).
        mutating func apply(_ change: TICDSChange, set: TICDSChangeSet) {
            func warn(_ code: FormatError.Code) {
                warnings.append(
                    TICDSReplay.Warning(
                        code: code, set: set.identifier, file: set.file.path, changeType: change.changeType, entity: change.entity, syncID: change.syncID,
                        key: change.relevantKey))
            }
            guard let type = change.changeType, let entity = change.entity, let syncID = change.syncID else { return warn(.ticdsObjectNotFound) }
            let key = TICDSObjectKey(entity: entity, syncID: syncID)
            if type == 1 {
                // An insert of a sync id the state holds updates that object (Spec/ticds.md 6.4).
                var object = objects[key] ?? TICDSReplayer.fresh(entity, model: model)
                for (name, value) in change.changedAttributes.objectValue?.members ?? [] {
                    object.attributes[name] = TICDSReplayer.value(value, type: TICDSReplayer.attributeType(name, of: entity, model: model))
                }
                objects[key] = object
                return
            }
            guard objects[key] != nil else { return warn(.ticdsObjectNotFound) }
            switch type {
            case 2:
                guard let name = change.relevantKey else { return warn(.ticdsObjectNotFound) }
                objects[key]?.attributes[name] = TICDSReplayer.value(
                    change.changedAttributes, type: TICDSReplayer.attributeType(name, of: entity, model: model))
            case 3, 4, 5:
                guard let name = change.relevantKey else { return warn(.ticdsRelatedObjectNotFound) }
                guard let relatedID = change.changedRelationships.stringValue else {
                    // A to-one set to nothing.
                    if type == 3, let old = objects[key]?.toOne[name] ?? nil { detach(key, name, old) }
                    return
                }
                let relatedEntity = change.relatedEntity ?? relationship(name, of: entity)?.destinationEntity ?? ""
                let related = TICDSObjectKey(entity: relatedEntity, syncID: relatedID)
                guard objects[related] != nil else { return warn(.ticdsRelatedObjectNotFound) }
                if type == 5 { detach(key, name, related) } else { attach(key, name, related, toMany: type == 4) }
            case 10:
                delete(key)
            default:
                // The framework applies no other type.
                break
            }
        }
    }

    /// Replays `document` from `whole`'s objects (Spec/ticds.md 10). `remoteWins` answers every
    /// conflict; nil stops at the first.
    static func replay(
        _ document: TICDSDocument, whole: TICDSWholeStore, start: [TICDSObjectKey: TICDSReplayObject], model: DataModel, remoteWins: Bool?
    ) -> TICDSReplay {
        let order = TICDSReport.unapplied(by: whole.client, in: document, includingOwn: true).next
        var state = State(objects: start, model: model)
        var stop: IntegrityProblem?
        struct Written {
            var local: Bool
            var set: TICDSChangeSet
            var value: AttributeValue
        }
        // By bytes, as the objects are (``TICDSObjectKey``).
        var written: [[ExactString]: Written] = [:]
        sets: for set in order {
            guard set.form == .sqlite, let changes = set.changes else {
                stop = stopped(at: set)
                break
            }
            let local = exactlyEqual(set.client, whole.client)
            let ordered = TICDSReport.changeOrder(changes)
            // The conflict check comes before the set's changes are applied (Spec/ticds.md 6.2, 10.5).
            var skipped: Set<Int64> = []
            for change in ordered where change.changeType == 2 {
                guard let entity = change.entity, let syncID = change.syncID, let name = change.relevantKey else { continue }
                let value = value(change.changedAttributes, type: attributeType(name, of: entity, model: model))
                let key = [entity, syncID, name].map(ExactString.init)
                if let earlier = written[key], earlier.local != local, earlier.value != value {
                    guard let remoteWins else {
                        stop = conflict(
                            set: set, other: earlier.set, local: local, entity: entity, syncID: syncID, key: name, value: value, otherValue: earlier.value)
                        break sets
                    }
                    if remoteWins == local {
                        skipped.insert(change.primaryKey)
                        continue
                    }
                }
                written[key] = Written(local: local, set: set, value: value)
            }
            for change in ordered where !skipped.contains(change.primaryKey) { state.apply(change, set: set) }
        }
        return TICDSReplay(
            document: document.identifier, wholeStoreClient: whole.client, order: order, warnings: state.warnings, stop: stop, objects: state.objects,
            model: model)
    }

    static func stopped(at set: TICDSChangeSet) -> IntegrityProblem {
        let binary = set.form == .binaryStore
        let cause = set.error?.code.rawValue ?? "ticds.password-required"
        return IntegrityProblem(
            code: binary ? .ticdsStoppedAtBinaryStore : .ticdsStoppedAtUnreadableSet, number: nil, files: [set.file.path],
            message: binary
                ? "the replay stops at set \(set.identifier) of client \(set.client) (\(set.file.size) bytes): it is in Apple's binary store form, which only Apple's Core Data reads"
                : "the replay stops at set \(set.identifier) of client \(set.client) (\(set.file.size) bytes): it cannot be read (\(cause))",
            details: JSONObject(
                [
                    ("set", .string(set.identifier)), ("client", .string(set.client)), ("modified", JSONValue(set.file.modified)),
                    ("size", JSONValue(set.file.size)),
                ] + (binary ? [] : [("cause", .string(cause))])))
    }

    static func conflict(
        set: TICDSChangeSet, other: TICDSChangeSet, local: Bool, entity: String, syncID: String, key: String, value: AttributeValue,
        otherValue: AttributeValue
    ) -> IntegrityProblem {
        func json(_ value: AttributeValue) -> JSONValue { (try? V2JSONEncoder.attributeJSON(value)) ?? .null }
        let (localSet, remoteSet) = local ? (set, other) : (other, set)
        let (localValue, remoteValue) = local ? (value, otherValue) : (otherValue, value)
        return IntegrityProblem(
            code: .ticdsConflict, number: nil, files: [other.file.path, set.file.path],
            message:
                "set \(set.identifier) of client \(set.client) changes \(key) of \(entity) \(syncID), which set \(other.identifier) of client \(other.client) changed to another value: the framework asks the app which wins (--conflicts remote|local)",
            details: JSONObject([
                ("set", .string(set.identifier)), ("client", .string(set.client)), ("otherSet", .string(other.identifier)),
                ("otherClient", .string(other.client)), ("entity", .string(entity)), ("syncID", .string(syncID)), ("key", .string(key)),
                ("localSet", .string(localSet.identifier)), ("remoteSet", .string(remoteSet.identifier)), ("localValue", json(localValue)),
                ("remoteValue", json(remoteValue)),
            ]))
    }
}

extension Ensemble {
    /// The replay of a TICoreDataSync document (Spec/ticds.md 10), for `merge` and its tests: the
    /// first input is a document folder, or an application folder with one document; the
    /// WholeStore is `asClient`'s, or the one a downloading client takes; ``Options/model`` is
    /// the app's model. `remoteWins` answers every conflict; nil stops at the first.
    package func replayTICDS(asClient: String? = nil, datesFile: String? = nil, remoteWins: Bool? = nil) throws(EnsembleError) -> TICDSReplay {
        let path = try firstInput()
        func usage(_ code: FormatError.Code, _ message: String) -> EnsembleError {
            EnsembleError(.usage, FormatError(code, message, location: .init(file: path)))
        }
        guard let model = options.model else {
            throw usage(.ticdsModelRequired, "the replay of a TICoreDataSync document reads its WholeStore with the app's model: give it with --model")
        }
        let folder = try TICDSReport.read(path, password: options.password, datesFile: datesFile)
        if folder.password == .wrong, let wrong = folder.errors.first(where: { $0.code == .ticdsWrongPassword }) { throw EnsembleError(.usage, wrong) }
        if folder.password == .notGiven && !folder.undecrypted.isEmpty {
            throw usage(.ticdsPasswordRequired, "the folder is encrypted: give the app's sync password")
        }
        guard folder.documents.count == 1, let document = folder.documents.first else {
            throw folder.documents.isEmpty
                ? usage(.ticdsNotTICDSFolder, "the folder holds no document")
                : usage(
                    .ticdsSeveralDocuments,
                    "the folder holds \(folder.documents.count) documents (\(folder.documents.map(\.identifier).joined(separator: ", "))): give one document folder"
                )
        }
        let stores = document.wholeStores.filter { $0.file != nil }
        let whole: TICDSWholeStore
        if let asClient {
            guard let chosen = stores.first(where: { exactlyEqual($0.client, asClient) }) else {
                throw usage(.ticdsNoSuchClient, "document \(document.identifier) has no WholeStore of client \(asClient)")
            }
            whole = chosen
        } else {
            let latest = stores.compactMap { $0.file?.modified }.max()
            let candidates = stores.filter { $0.file?.modified == latest }
            guard let chosen = candidates.first else {
                throw EnsembleError(
                    .unreadable, FormatError(.ticdsNoWholeStore, "document \(document.identifier) has no WholeStore", location: .init(file: path)))
            }
            guard candidates.count == 1 else {
                throw usage(
                    .ticdsWholeStoreAmbiguous,
                    "the WholeStores of \(candidates.map(\.client).joined(separator: ", ")) have the same date: choose one with --as-client")
            }
            whole = chosen
        }
        if let error = whole.storeError ?? whole.appliedError { throw EnsembleError(.unreadable, error) }
        let contents: CoreDataStoreContents
        do {
            contents = try folder.wholeStoreContents(document: document, client: whole.client, model: model, password: options.password)
        } catch {
            throw EnsembleError(.unreadable, error)
        }
        return TICDSReplayer.replay(
            document, whole: whole, start: TICDSReplayer.objects(contents, model: model), model: model, remoteWins: remoteWins)
    }

    /// `merge` of a TICoreDataSync document (Spec/ticds.md 10): its WholeStore's objects,
    /// identified by `ticdsSyncID`, then every set that WholeStore's client had not applied, in
    /// the framework's order, as a merge's state (Spec/merge.md 9). The first input is a document
    /// folder, or an application folder with one document; ``Options/model`` is the app's model
    /// (required); `asClient` chooses the WholeStore (default: the one a downloading client
    /// takes); `datesFile` as for ``inspectTICDS(asClient:datesFile:)``. A set in Apple's binary
    /// store form or one that cannot be read stops the replay, and so does a conflict unless
    /// `remoteWins` answers it (true: the remote change wins; false: the local one): an
    /// ``EnsembleError/Kind/integrity`` error naming it. Changes the framework would skip are
    /// `warnings` (`ticds.object-not-found`, `ticds.related-object-not-found`).
    public func mergeTICDS(
        asClient: String? = nil, datesFile: String? = nil, remoteWins: Bool? = nil, warnings: inout [FormatError]
    ) throws(EnsembleError)
        -> StoreState
    {
        let replay = try replayTICDS(asClient: asClient, datesFile: datesFile, remoteWins: remoteWins)
        warnings += replay.warningErrors
        if let stop = replay.stop { throw EnsembleError(kind: .integrity, problems: [stop]) }
        return replay.storeState()
    }
}
