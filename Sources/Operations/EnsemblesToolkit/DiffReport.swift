import Foundation
import JSONDocument
import EnsembleModel
import MergeEngine
import CloudFolder

/// One side of a diff (Spec/diff.md 2): a folder merged strictly or seen as one device, what it
/// integrates, and the state it reaches.
struct DiffSide {
    /// An event by store and revision, compared exactly (Spec/diff.md 4).
    typealias Key = StoreRevision

    var path: String
    var view: String?
    var identifier: String
    /// `merged` for a strict merge; else device mode's outcome.
    var outcome: String
    /// Device mode's stop as its report gives it (with `delivery`), or nil.
    var stop: JSONValue?
    var listing: EnsembleListing
    /// The events integrated, with the file each was read from.
    var integrated: [Key: String] = [:]
    /// Device mode's held-back events, each with its reasons (findings as JSON).
    var heldBack: [Key: JSONValue] = [:]
    var pending: Set<Key> = []
    var covered: RevisionSet?
    /// Nil when the device integrates nothing: compared as an empty state (Spec/diff.md 5).
    var state: StoreState?
    /// The side's replay again, recording who sets each property of the objects given; nil
    /// when the side has no state.
    var replayWatching: ((Set<StoreState.ObjectKey>) throws(EnsembleError) -> StoreState)?

    /// Why this side does not integrate `key`, another side's event (Spec/diff.md 4): the first
    /// that applies of held back, stopped, covered, pending and absent.
    func reason(_ key: Key) -> JSONValue {
        func reason(_ kind: String, _ findings: [JSONValue]) -> JSONValue {
            .object(JSONObject([("kind", .string(kind)), ("findings", .array(findings))]))
        }
        if let reasons = heldBack[key] { return reason("held-back", reasons.arrayValue ?? []) }
        if let stop { return reason("stopped", [stop]) }
        if let known = covered?[key.store.value], key.revision <= known { return reason("covered", []) }
        if pending.contains(key) { return reason("pending", []) }
        return reason("absent", [])
    }

    /// The outcome as the sides compare it (Spec/diff.md 2): a strict merge's `merged` is a
    /// device's `integrates`.
    var comparableOutcome: String { outcome == "merged" ? "integrates" : outcome }

    var document: JSONValue {
        .object(
            JSONObject([
                ("path", .string(path)), ("view", view.map(JSONValue.string) ?? .null), ("identifier", .string(identifier)),
                ("outcome", .string(outcome)), ("stop", stop ?? .null),
            ]))
    }
}

extension Ensemble {
    /// Compares this folder with `other` (Spec/diff.md): the files present in one only or whose
    /// bytes differ, the events one side integrates and the other does not (with the other
    /// side's reason), and the merged states object by object and property by property. With
    /// `asStore` (`otherAsStore`) a side is the folder as that device sees it (Spec/merge.md 15);
    /// the same folder with two stores compares two devices. Returns the `diff --json` document
    /// (schema `diff.schema.json`); its `equal` member is true when nothing differs. A side that
    /// cannot be read or merged stops the comparison with its findings; warnings that stop
    /// nothing (`merge.model-not-given`) go to `warnings`.
    public func diff(
        against other: Ensemble, asStore: String? = nil, otherAsStore: String? = nil, warnings: inout [FormatError]
    ) throws(EnsembleError) -> JSONValue {
        var a = try diffSide(view: asStore, warnings: &warnings)
        var b = try other.diffSide(view: otherAsStore, warnings: &warnings)
        let files = try Self.fileDifferences(a.listing, b.listing)
        let events = Self.eventDifferences(a, b)
        var state = try Self.stateDifferences(a.state, b.state)
        if !state.isEmpty {
            // Each state is given back before the replays that say who set the values reported:
            // one state at a time (Spec/diff.md 5).
            a.state = nil
            b.state = nil
            let objects = Set(
                state.map {
                    StoreState.ObjectKey(
                        entity: ExactString($0[JSONPointer(["entity"])]?.stringValue ?? ""), id: ExactString($0[JSONPointer(["id"])]?.stringValue ?? ""))
                })
            // Only the records are kept from each replay, so that its state goes before the next.
            var setBy: [[StoreState.ObjectKey: [ExactString: String?]]] = []
            for side in [a, b] {
                var found: [StoreState.ObjectKey: [ExactString: String?]] = [:]
                if let replay = side.replayWatching {
                    let replayed = try replay(objects)
                    for key in objects { found[key] = replayed.provenance(of: key) }
                }
                setBy.append(found)
            }
            state = Self.withProvenance(state, a: setBy[0], b: setBy[1])
        }
        let equal =
            a.comparableOutcome == b.comparableOutcome && files.allSatisfy { $0.value.arrayValue?.isEmpty ?? true } && events.isEmpty && state.isEmpty
        return .object(
            JSONObject([
                ("diffVersion", JSONValue(Int64(1))), ("kind", .string("diff")), ("equal", .bool(equal)), ("a", a.document), ("b", b.document),
                ("files", .object(files)), ("events", .array(events)), ("state", .array(state)),
            ]))
    }

    /// The side of a diff this ensemble is: its one ensemble folder, merged strictly or as
    /// device `view`.
    func diffSide(view: String?, warnings: inout [FormatError]) throws(EnsembleError) -> DiffSide {
        let path = try firstInput()
        let listings = try listings()
        guard let listing = listings.first else {
            throw EnsembleError(.usage, FormatError(.folderNotCloudFolder, "holds no ensemble folder", location: .init(file: path)))
        }
        guard listings.count == 1 else {
            throw EnsembleError(
                .usage,
                FormatError(.mergeSeveralEnsembles, "diff compares one ensemble folder with another; give the ensemble folder", location: .init(file: path)))
        }
        if let view {
            let (input, integration, device, _) = try deviceIntegration(as: view, warnings: &warnings)
            var side = DiffSide(
                path: path, view: view, identifier: listing.identifier, outcome: device.outcome,
                stop: device.stop == nil ? nil : device.report[JSONPointer(["stop"])], listing: listing,
                covered: device.baselineRevisions, state: device.state)
            for event in device.integrated { side.integrated[DiffSide.Key(store: ExactString(event.store), revision: event.revision)] = event.file }
            for item in device.report[JSONPointer(["heldBack"])]?.arrayValue ?? [] {
                guard let store = item[JSONPointer(["store"])]?.stringValue, let revision = item[JSONPointer(["revision"])]?.numberValue?.int64Value
                else { continue }
                side.heldBack[DiffSide.Key(store: ExactString(store), revision: revision)] = item[JSONPointer(["reasons"])] ?? .array([])
            }
            for files in device.report[JSONPointer(["pending"])]?.arrayValue ?? [] {
                guard let file = files.arrayValue?.first?.stringValue,
                    let name = CloudFileName.parseEvent(CloudFileName.strippingWrapperSuffixes(URL(fileURLWithPath: file).lastPathComponent))
                else { continue }
                side.pending.insert(DiffSide.Key(store: ExactString(name.storeIdentifier), revision: name.revision))
            }
            if integration.outcome == .integrates {
                side.replayWatching = { (objects) throws(EnsembleError) -> StoreState in
                    var state = StoreState(model: input.model)
                    state.watch(objects)
                    do throws(MergeFailure) {
                        try MergeEngine.replay(integration.baselines, into: &state, input)
                        try MergeEngine.replay(integration.integrable, into: &state, input)
                    } catch {
                        throw EnsembleError(kind: .integrity, problems: error.problems)
                    }
                    return state
                }
            }
            return side
        }
        let input = try MergeInputs.gather(inputs, reader: try reader(), summarize: true, modelVersions: options.modelVersions, warnings: &warnings)
        warnings += Self.modelWarning(input)
        let analysis = MergeEngine.analyze(input)
        guard analysis.problems.isEmpty else { throw EnsembleError(kind: .integrity, problems: analysis.problems) }
        var side = DiffSide(
            path: path, view: nil, identifier: listing.identifier, outcome: "merged", stop: nil, listing: listing, covered: analysis.baselineRevisions)
        var integrated: [DiffSide.Key: String] = [:]
        side.state = try Self.replay(analysis, input, watching: []) { sourced in
            integrated[DiffSide.Key(store: ExactString(sourced.event.storeIdentifier), revision: sourced.event.revision)] = sourced.file
        }
        side.integrated = integrated
        side.replayWatching = { (objects) throws(EnsembleError) -> StoreState in try Self.replay(analysis, input, watching: objects) { _ in } }
        return side
    }

    /// A strict merge's replay (Spec/merge.md 6): the baselines, then every event to replay in
    /// replay order, a page at a time, each handed to `noting` first; `watching` as
    /// ``StoreState/watch(_:)``.
    static func replay(
        _ analysis: MergeAnalysis, _ input: MergeInput, watching: Set<StoreState.ObjectKey>, noting: (SourcedEvent) -> Void
    ) throws(EnsembleError) -> StoreState {
        var state = StoreState(model: input.model)
        state.watch(watching)
        do {
            try MergeEngine.replay(analysis.baselines, into: &state, input)
            try analysis.replayPages { page in
                for sourced in page { noting(sourced) }
                try MergeEngine.replay(page, into: &state, input)
            }
        } catch let failure as MergeFailure {
            throw EnsembleError(kind: .integrity, problems: failure.problems)
        } catch {
            let message = (error as? FormatError)?.message ?? "\(error)"
            throw EnsembleError(
                kind: .failure, problems: [IntegrityProblem(code: .mergeEventStore, number: nil, files: [], message: "the event index failed: \(message)")])
        }
        return state
    }

    /// The files of `events/`, `baselines/`, `stores/` and `data/` present in one folder only or
    /// whose bytes differ, by group (Spec/diff.md 3). Debris takes no part.
    static func fileDifferences(_ a: EnsembleListing, _ b: EnsembleListing) throws(EnsembleError) -> JSONObject {
        // Names compare exactly: two names Unicode calls equivalent are two files.
        func compared(_ listing: EnsembleListing) -> [ExactString: ListedEntry] {
            var entries: [ExactString: ListedEntry] = [:]
            for entry in listing.entries where group(entry.entry) != nil { entries[ExactString(entry.path)] = entry }
            return entries
        }
        let inA = compared(a), inB = compared(b)
        var groups: [String: [JSONValue]] = ["registrations": [], "events": [], "baselines": [], "data": []]
        for path in sortedUnique(inA.keys.map(\.value) + inB.keys.map(\.value)) {
            let mine = inA[ExactString(path)], theirs = inB[ExactString(path)]
            guard let entry = mine ?? theirs, let group = group(entry.entry) else { continue }
            let difference: String
            if let mine, let theirs {
                guard try !sameBytes(a.file(mine.path), b.file(theirs.path), sizes: (mine.size, theirs.size)) else { continue }
                difference = "bytes"
            } else {
                difference = mine == nil ? "only-b" : "only-a"
            }
            var store: JSONValue = .null, revision: JSONValue = .null
            switch entry.entry {
            case .event(let name):
                store = .string(name.storeIdentifier)
                revision = JSONValue(name.revision)
            case .storeRegistration(let identifier):
                store = .string(identifier)
            default:
                break
            }
            groups[group, default: []].append(
                .object(JSONObject([("path", .string(path)), ("difference", .string(difference)), ("store", store), ("revision", revision)])))
        }
        return JSONObject(["registrations", "events", "baselines", "data"].map { ($0, JSONValue.array(groups[$0] ?? [])) })
    }

    /// Each property entry with `aSetBy` beside `a` and `bSetBy` beside `b`: the file of the event
    /// that set the value last, or null when an inverse relationship did (Spec/diff.md 5).
    static func withProvenance(
        _ rows: [JSONValue], a: [StoreState.ObjectKey: [ExactString: String?]], b: [StoreState.ObjectKey: [ExactString: String?]]
    ) -> [JSONValue] {
        rows.map { row in
            guard var object = row.objectValue else { return row }
            let key = StoreState.ObjectKey(
                entity: ExactString(object["entity"]?.stringValue ?? ""), id: ExactString(object["id"]?.stringValue ?? ""))
            let setBy = (a: a[key] ?? [:], b: b[key] ?? [:])
            object["properties"] = .array(
                (object["properties"]?.arrayValue ?? []).map { entry in
                    guard var property = entry.objectValue, let name = property["name"]?.stringValue else { return entry }
                    if property["a"] != nil { property["aSetBy"] = (setBy.a[name] ?? nil).map(JSONValue.string) ?? .null }
                    if property["b"] != nil { property["bSetBy"] = (setBy.b[name] ?? nil).map(JSONValue.string) ?? .null }
                    return .object(property)
                })
            return .object(object)
        }
    }

    /// The group of a file (Spec/diff.md 3); nil for debris.
    static func group(_ entry: CloudEntry) -> String? {
        switch entry {
        case .storeRegistration: "registrations"
        case .event: "events"
        case .baseline: "baselines"
        case .dataFile: "data"
        case .debris: nil
        }
    }

    /// Whether two files hold the same bytes: a different size settles it; otherwise their
    /// SHA-256 digests, each file read in chunks (Spec/diff.md 3).
    static func sameBytes(_ a: FileReference, _ b: FileReference, sizes: (Int64?, Int64?)) throws(EnsembleError) -> Bool {
        if let first = sizes.0, let second = sizes.1, first != second { return false }
        do {
            return try DataFileReader.digest(of: a) == DataFileReader.digest(of: b)
        } catch {
            throw EnsembleError(.unreadable, error)
        }
    }

    /// The events one side integrates and the other does not, by store (UTF-8 bytes) and
    /// revision, each with the other side's reason (Spec/diff.md 4).
    static func eventDifferences(_ a: DiffSide, _ b: DiffSide) -> [JSONValue] {
        var rows: [(key: DiffSide.Key, value: JSONValue)] = []
        for (side, file, key) in a.integrated.map({ ("a", $0.value, $0.key) }) + b.integrated.map({ ("b", $0.value, $0.key) }) {
            let without = side == "a" ? b : a
            guard without.integrated[key] == nil else { continue }
            rows.append(
                (
                    key,
                    .object(
                        JSONObject([
                            ("store", .string(key.store.value)), ("revision", JSONValue(key.revision)), ("integratedBy", .string(side)),
                            ("file", .string(file)), ("reason", without.reason(key)),
                        ]))
                ))
        }
        rows.sort { $0.key.store != $1.key.store ? utf8Precedes($0.key.store.value, $1.key.store.value) : $0.key.revision < $1.key.revision }
        return rows.map(\.value)
    }

    /// The two states compared as one walk over both in the state document's order, entity then
    /// global identifier in UTF-8 byte order (Spec/diff.md 5): an object of one state only is
    /// `removed` (in a) or `added` (in b), an object of both whose properties differ `changed`.
    /// A missing state (a device that integrates nothing) is empty.
    package static func stateDifferences(_ a: StoreState?, _ b: StoreState?) throws(EnsembleError) -> [JSONValue] {
        let orderA = a?.objectOrder() ?? [], orderB = b?.objectOrder() ?? []
        var i = 0, j = 0
        var rows: [JSONValue] = []
        typealias Object = (entity: String, id: String, properties: [(name: String, value: JSONValue)])
        func object(_ state: StoreState?, _ number: Int32) throws(EnsembleError) -> Object {
            guard let state else { return ("", "", []) }
            do {
                return try state.orderedObject(number)
            } catch {
                throw EnsembleError(.failure, error)
            }
        }
        var left = i < orderA.count ? try object(a, orderA[i]) : nil
        var right = j < orderB.count ? try object(b, orderB[j]) : nil
        while left != nil || right != nil {
            let order: Int
            if let left, let right {
                order = objectOrder(left, right)
            } else {
                order = left == nil ? 1 : -1
            }
            if order < 0, let left {
                rows.append(row(left.entity, left.id, "removed", propertyDifferences(left.properties, [])))
            } else if order > 0, let right {
                rows.append(row(right.entity, right.id, "added", propertyDifferences([], right.properties)))
            } else if let left, let right {
                let properties = propertyDifferences(left.properties, right.properties)
                if !properties.isEmpty { rows.append(row(left.entity, left.id, "changed", properties)) }
            }
            if order <= 0 {
                i += 1
                left = i < orderA.count ? try object(a, orderA[i]) : nil
            }
            if order >= 0 {
                j += 1
                right = j < orderB.count ? try object(b, orderB[j]) : nil
            }
        }
        return rows
    }

    /// -1, 0 or 1 as object `x` comes before, is, or comes after `y`: by entity, then global
    /// identifier, each compared as UTF-8 bytes (Spec/README.md 4); equal only when both are
    /// exactly equal.
    static func objectOrder(
        _ x: (entity: String, id: String, properties: [(name: String, value: JSONValue)]),
        _ y: (entity: String, id: String, properties: [(name: String, value: JSONValue)])
    ) -> Int {
        if utf8Precedes(x.entity, y.entity) { return -1 }
        if utf8Precedes(y.entity, x.entity) { return 1 }
        if utf8Precedes(x.id, y.id) { return -1 }
        if utf8Precedes(y.id, x.id) { return 1 }
        return 0
    }

    static func row(_ entity: String, _ id: String, _ change: String, _ properties: [JSONValue]) -> JSONValue {
        .object(JSONObject([("entity", .string(entity)), ("id", .string(id)), ("change", .string(change)), ("properties", .array(properties))]))
    }

    /// Whether two state-document values are written as the same bytes (Spec/diff.md 5): an
    /// Integer `1` and a Double `1.0`, or `0.0` and `-0.0`, are equal JSON numbers but different
    /// values, as the state document tells them apart.
    static func sameText(_ a: JSONValue, _ b: JSONValue) -> Bool {
        let writer = JSONWriter()
        return writer.string(a).utf8.elementsEqual(writer.string(b).utf8)
    }

    /// Two objects' properties (each sorted by name, UTF-8 bytes) walked together: a property
    /// set in one only is `removed` (set in a) or `added` (set in b), one set in both to values
    /// that differ is `changed`; values compare by their canonical text (Spec/diff.md 5).
    static func propertyDifferences(_ a: [(name: String, value: JSONValue)], _ b: [(name: String, value: JSONValue)]) -> [JSONValue] {
        var i = 0, j = 0
        var rows: [JSONValue] = []
        while i < a.count || j < b.count {
            let order: Int =
                i == a.count ? 1 : j == b.count ? -1 : utf8Precedes(a[i].name, b[j].name) ? -1 : utf8Precedes(b[j].name, a[i].name) ? 1 : 0
            if order < 0 {
                rows.append(.object(JSONObject([("name", .string(a[i].name)), ("change", .string("removed")), ("a", a[i].value)])))
                i += 1
            } else if order > 0 {
                rows.append(.object(JSONObject([("name", .string(b[j].name)), ("change", .string("added")), ("b", b[j].value)])))
                j += 1
            } else {
                if !sameText(a[i].value, b[j].value) {
                    rows.append(.object(JSONObject([("name", .string(a[i].name)), ("change", .string("changed")), ("a", a[i].value), ("b", b[j].value)])))
                }
                i += 1
                j += 1
            }
        }
        return rows
    }
}
