import Foundation
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import CloudFolder
import FileWrappers
import MergeEngine

/// One finding of `verify` (Spec/diagnostics.md, which defines every code: its severity, number,
/// files, details and when it is raised).
public struct Diagnostic: Sendable {
    /// How much a finding matters: errors stop every device's merge, warnings cost space or
    /// time or need a look, infos are facts (Spec/diagnostics.md 1).
    public enum Severity: String, Sendable, Comparable, CaseIterable {
        case error, warning, info

        private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
    }

    /// The stable code, such as `verify.revision-gap`.
    public var code: FormatError.Code
    public var severity: Severity
    /// The original framework's error number, where it has one (200 for a revision gap).
    public var number: Int?
    /// Relative to the ensemble folder; sorted, unique.
    public var files: [String]
    /// What is wrong, in words (informative: it may change between versions).
    public var reason: String
    /// What it means for the devices and what to do (informative).
    public var consequence: String
    /// The code's facts (store, revisions, data file...), as Spec/diagnostics.md lists them.
    public var details: JSONObject
    /// Whether `severity` was chosen by the caller rather than fixed by the code (Spec/verify.md 5.1).
    public var severityChosen = false
    /// Whether an accept list accepts it: it then does not count for the exit status (Spec/verify.md 5.1).
    public var accepted = false
}

extension FormatError.Code {
    public static let verifyUnreadableFile = Self("verify.unreadable-file")
    public static let verifyDuplicatePart = Self("verify.duplicate-part")
    public static let verifyInvalidRegistration = Self("verify.invalid-registration")
    public static let verifyNameMismatch = Self("verify.name-mismatch")
    public static let verifyWrongFolder = Self("verify.wrong-folder")
    public static let verifyIncompleteEvent = Self("verify.incomplete-event")
    public static let verifyConflictingRevision = Self("verify.conflicting-revision")
    public static let verifyUnregisteredStore = Self("verify.unregistered-store")
    public static let verifyRevisionGap = Self("verify.revision-gap")
    public static let verifyMissingDependency = Self("verify.missing-dependency")
    public static let verifyMissingDataFile = Self("verify.missing-data-file")
    public static let verifyUnknownModelVersion = Self("verify.unknown-model-version")
    /// Counts the findings of one code for one file beyond the first 100 (Spec/README.md 6.2).
    public static let verifyMoreFindings = Self("verify.more-findings")
    public static let verifyIncompleteMultipart = Self("verify.incomplete-multipart")
    public static let verifyCoveredEvent = Self("verify.covered-event")
    public static let verifyRedundantBaseline = Self("verify.redundant-baseline")
    public static let verifyConcurrentBaselines = Self("verify.concurrent-baselines")
    public static let verifyDebris = Self("verify.debris")
    public static let verifyDuplicateFolder = Self("verify.duplicate-folder")
    public static let verifyOrphanDataFile = Self("verify.orphan-data-file")
    public static let verifyUnknownKeys = Self("verify.unknown-keys")
    /// Device mode: an event or baseline the device holds back (Spec/merge.md 15.6).
    public static let verifyHeldBack = Self("verify.held-back")
    /// Device mode: the device integrates nothing (Spec/merge.md 15.6).
    public static let verifyDeviceStop = Self("verify.device-stop")
    public static let verifyMixedWrapping = Self("verify.mixed-wrapping")
    /// Events of different stores that do not know each other insert one object (Spec/diagnostics.md 4.19a).
    public static let verifyConcurrentInsert = Self("verify.concurrent-insert")
    /// A store inserts an object again with no delete of it in between (Spec/diagnostics.md 4.19b).
    public static let verifyReinsertedObject = Self("verify.reinserted-object")
    /// One event inserts and deletes one object (Spec/diagnostics.md 4.19c).
    public static let verifyInsertAndDelete = Self("verify.insert-and-delete")
    /// Events above the baseline of two or more stores made before it (Spec/diagnostics.md 4.19d).
    public static let verifySavesBeforeBaseline = Self("verify.saves-before-baseline")
}

/// The verification of one ensemble folder.
/// What `verify` found in one ensemble folder (Spec/verify.md 4): the result of
/// ``Ensemble/verify(asStore:progress:)``, one per ensemble of the folder.
public struct EnsembleVerification: Sendable {
    /// The ensemble's folder name.
    public var identifier: String
    /// The ensemble folder relative to the path given (`"."` when it is that path).
    public var displayPath: String
    /// Sorted by severity, code, files, details.
    public var diagnostics: [Diagnostic]
    /// The growth figures of Spec/diagnostics.md.
    public var growth: JSONValue
    /// Why a rebase is recommended: the first rule of Spec/diagnostics.md 6.4 that holds; nil
    /// when none does.
    public var rebaseReason: String?
    /// Diagnostics left out because their code was set to be ignored (Spec/verify.md 5.1).
    public var ignored = 0
    /// The SHA-256 (lowercase hexadecimal) of each file the diagnostics name, nil for a path that
    /// is not a readable regular file; recorded only for an accept list (Spec/verify.md 5.1).
    package var fileDigests: [ExactString: String?] = [:]

    /// Adds findings made outside the folder's own checks (a device's, Spec/diagnostics.md
    /// 4.17d), in the order of Spec/diagnostics.md 5.
    public mutating func add(_ found: [Diagnostic]) {
        diagnostics = (diagnostics + found).sorted(by: EnsembleVerifier.order)
    }
}

/// Checks one ensemble folder without changing it (Spec/verify.md): every file, the folder as
/// the merge would see it, and how much a rebase would save.
package enum EnsembleVerifier {
    /// Throws only when the event index (SQLite) fails, which says nothing about the folder.
    /// With `device`, the folder is also seen as that device sees it (Spec/merge.md 15.6).
    /// `contents` is the listing read with summaries (verify needs each event's header,
    /// references and change counts, never all object changes at once: a large folder would not
    /// fit in memory); a caller that needs them too reads them once and passes them.
    package static func verify(
        _ listing: EnsembleListing, contents: EnsembleContents, reader: EventFileReader, modelVersions: ModelVersionCatalog? = nil,
        asStore device: String? = nil, objects: ObjectIndex? = nil
    ) throws(FormatError) -> EnsembleVerification {
        let evidence = DeliveryEvidence(contents)
        var diagnostics: [Diagnostic] = []
        func add(
            _ code: FormatError.Code, _ severity: Diagnostic.Severity, _ number: Int?, _ files: [String],
            _ reason: String, _ consequence: String, _ details: [(String, JSONValue)] = []
        ) {
            diagnostics.append(
                Diagnostic(
                    code: code, severity: severity, number: number, files: sortedUnique(files),
                    reason: reason, consequence: consequence, details: JSONObject(details)))
        }

        // Files that do not read.
        var duplicateParts: [String: [String]] = [:]
        for problem in contents.problems {
            let file = problem.location.file ?? ""
            switch problem.code {
            case .storeInvalid:
                add(
                    .verifyInvalidRegistration, .error, nil, [file], problem.message,
                    "the store counts as registered, but its leech date is unknown to tools",
                    [("store", .string(String(file.split(separator: "/").last ?? "")))])
            case .v2DuplicatePart:
                duplicateParts[partBase(file), default: []].append(file)
            default:
                add(
                    .verifyUnreadableFile, .error, nil, [file], problem.message,
                    "devices will refuse to merge until this file is replaced by a readable copy or removed",
                    [
                        ("cause", .string(problem.code.rawValue)),
                        ("pointer", problem.location.pointer.map { .string($0.description) } ?? .null),
                        ("offset", problem.location.offset.map { JSONValue(Int64($0)) } ?? .null),
                    ])
            }
        }
        if contents.wrapping.count > 1 {
            // Devices with different wrapper settings wrote into one folder (Spec/wrappers.md 8).
            let stacks = contents.wrapping.map { (name: WrapperLayer.stackName($0.key), count: $0.value) }.sorted { utf8Precedes($0.name, $1.name) }
            add(
                .verifyMixedWrapping, .warning, nil, stacks.compactMap { $0.count.examples.sorted(by: utf8Precedes).first },
                "the folder's files are wrapped in different ways: "
                    + stacks.map { "\($0.count.files) \($0.name)" }.joined(separator: ", "),
                "a device whose zip or encryption setting differs from the others wrote here; devices read only the files wrapped as they expect, so give every device the same setting and rewrite the folder (logtool convert)",
                [("layers", .object(JSONObject(stacks.map { ($0.name, JSONValue(Int64($0.count.files))) })))])
        }
        for files in duplicateParts.values {
            add(
                .verifyDuplicatePart, .error, nil, files, "these files share a base name but form neither one file nor one multipart set",
                "the event cannot be read until the stray files are removed")
        }

        // Each readable event and baseline on its own.
        var input = MergeInput()
        input.model = reader.model
        input.modelHash = reader.model?.modelHash
        input.modelVersions = ModelVersionCatalog.forCheck(model: reader.model, known: modelVersions)
        input.registeredStores = Set(contents.stores.map { ExactString($0.storeIdentifier) })
        input.dataFiles = Set(contents.dataFiles.map { ExactString($0.name) })
        input.loadBody = { sourced throws(FormatError) in
            try reader.readEvent(file: listing.file(sourced.file), parts: sourced.parts.map { listing.file($0) }, digest: sourced.contentDigest)
        }
        // Data files and files by their bytes: two named in NFC and NFD are two.
        var referenced = Set<ExactString>()
        // Sized once for the usual folder (a baseline in events/ or an event in baselines/ may
        // grow them): the summaries are large values, and a grown array held its old buffer
        // beside the new one (Benchmarks/README.md, memory per event).
        input.events.reserveCapacity(contents.events.count)
        input.baselines.reserveCapacity(contents.baselines.count)
        for file in contents.events {
            guard let event = file.entry.event else {
                if !file.entry.isComplete { incomplete(file.entry, delivery: evidence.delivery(ofIncomplete: file), into: &diagnostics) }
                continue
            }
            nameMismatches(
                file.entry.file,
                [
                    ("globalCount", String(file.name.globalCount), String(event.globalCount)),
                    ("storeIdentifier", file.name.storeIdentifier, event.storeIdentifier),
                    ("revision", String(file.name.revision), String(event.revision)),
                ], into: &diagnostics)
            if event.type == .baseline {
                add(
                    .verifyWrongFolder, .warning, nil, [file.entry.file], "a baseline (type 100) in events/",
                    "it is merged as a baseline, but other tools may not find it", [("type", JSONValue(event.type.rawValue))])
            }
            collect(file.entry.summary ?? SourcedEvent(event: event, file: file.entry.file), into: &input, referenced: &referenced)
        }
        for file in contents.baselines {
            guard let event = file.entry.event else {
                // A baseline has no revision of its own to follow it: pending while incomplete.
                if !file.entry.isComplete { incomplete(file.entry, delivery: .string("pending"), into: &diagnostics) }
                continue
            }
            var fields = [
                ("globalCount", String(file.name.globalCount), String(event.globalCount)),
                ("uniqueIdentifier", file.name.uniqueIdentifier, event.uniqueIdentifier),
            ]
            if let prefix = file.name.storePrefix {
                fields.append(("storePrefix", prefix, String(decoding: Array(event.storeIdentifier.utf16.prefix(8)), as: UTF16.self)))
            }
            nameMismatches(file.entry.file, fields, into: &diagnostics)
            if event.type == .save || event.type == .merge {
                add(
                    .verifyWrongFolder, .warning, nil, [file.entry.file], "a save or merge event (type \(event.type.rawValue)) in baselines/",
                    "it is merged as an event, but other tools may take it for a baseline", [("type", JSONValue(event.type.rawValue))])
            }
            collect(file.entry.summary ?? SourcedEvent(event: event, file: file.entry.file), into: &input, referenced: &referenced)
        }

        // The folder as the merge sees it.
        let analysis = MergeEngine.analyze(input)
        if let failure = analysis.problems.first(where: { $0.code == .mergeEventStore }) {
            throw FormatError(.mergeEventStore, failure.message)
        }
        let covered = try analysis.coveredEvents()
        let replayed = try ReplayedTotals(analysis)
        for problem in analysis.problems {
            let code: FormatError.Code
            var consequence = "devices will refuse to merge until this is repaired"
            switch problem.code {
            case .mergeIncompleteData:
                code = .verifyIncompleteEvent
                consequence = "devices will refuse to merge while an incomplete event is in the folder"
            case .mergeConflictingRevision: code = .verifyConflictingRevision
            case .mergeUnregisteredStore:
                code = .verifyUnregisteredStore
                consequence = "devices will refuse to merge this store's events until stores/ registers it (original error 205)"
            case .mergeRevisionGap:
                code = .verifyRevisionGap
                consequence = "devices will refuse to merge until the missing revisions arrive (original error 200)"
            case .mergeMissingDependency:
                code = .verifyMissingDependency
                consequence = "devices will refuse to merge until the revision it depends on arrives (original error 201)"
            case .mergeMissingDataFile:
                code = .verifyMissingDataFile
                consequence = "devices will refuse to merge until the data file arrives (original error 210)"
            case .mergeUnknownModelVersion:
                code = .verifyUnknownModelVersion
                consequence = "devices with this model will pause merging until they update (original error 204)"
            case .mergeMoreFindings:
                // The counted code as verify names it (merge.X is verify.X for every code counted).
                let counted = "verify." + (problem.details["code"]?.stringValue ?? "").dropFirst("merge.".count)
                add(
                    .verifyMoreFindings, .error, problem.number, problem.files,
                    "and \(problem.details["count"]?.numberValue?.int64Value ?? 0) more \(counted) findings for this file",
                    "the same as the \(counted) findings before it for this file", [("code", .string(counted)), ("count", problem.details["count"] ?? .null)])
                continue
            default: continue
            }
            var details = problem.details.members.map { ($0.key, $0.value) }
            if let delivery = evidence.delivery(code, problem.details) { details.append(("delivery", delivery)) }
            add(code, .error, problem.number, problem.files, problem.message, consequence, details)
        }
        if let device {
            let integration = DeviceIntegration.integrate(input, as: device)
            if let failure = integration.problems.first(where: { $0.code == .mergeEventStore }) {
                throw FormatError(.mergeEventStore, failure.message)
            }
            if let stop = integration.stop {
                add(
                    .verifyDeviceStop, .error, stop.number, stop.files, stop.message, "device \(device) integrates nothing from this folder",
                    [("code", .string(stop.code.rawValue)), ("outcome", .string(integration.outcome.rawValue))])
            }
            for held in integration.heldBackBaselines + integration.heldBack where held.reasons.first?.code != integration.stop?.code {
                var details: [(String, JSONValue)] = [
                    ("store", .string(held.sourced.event.storeIdentifier)), ("revision", JSONValue(held.sourced.event.revision)),
                    ("reasons", .array(held.reasons.map { .string($0.code.rawValue) })),
                ]
                if let delivery = held.reasons.lazy.filter({ $0.details["dependency"]?.stringValue != "held-back" })
                    .compactMap({ evidence.delivery($0.code, $0.details) }).first
                {
                    details.append(("delivery", delivery))
                }
                add(
                    .verifyHeldBack, .warning, held.reasons.first?.number, [held.sourced.file], held.reasons.map(\.message).joined(separator: "; "),
                    "device \(device) holds it back and integrates the rest (Spec/merge.md 15)", details)
            }
        }
        for sourced in covered {
            add(
                .verifyCoveredEvent, .warning, nil, [sourced.file], "the baseline already holds this event's effect",
                "it only takes space; a rebase would remove it",
                [("store", .string(sourced.event.storeIdentifier)), ("revision", JSONValue(sourced.event.revision))])
        }
        for (baseline, by) in analysis.redundantBaselines {
            add(
                .verifyRedundantBaseline, .warning, nil, [baseline.file], "another baseline knows everything this one does",
                "it only takes space; a rebase would remove it", [("by", .string(by.file))])
        }
        if replayed.beforeBaseline.count >= 2 {
            // Devices may apply such saves of two stores in different orders (Spec/repair.md 9.2).
            let stores = replayed.beforeBaseline.keys.map(\.value).sorted(by: utf8Precedes)
            let files = replayed.beforeBaseline.values.flatMap { $0 }.sorted(by: utf8Precedes)
            add(
                .verifySavesBeforeBaseline, .warning, nil, Array(files.prefix(100)),
                "\(files.count) event(s) of \(stores.count) stores above the baseline were made before it: each names another store the baseline names at a lower revision, or not at all",
                "a device that receives them at different times may apply them in another order than the others (repair.md 9.2) and keep other values; repair --cure-lost makes one baseline of them",
                [("stores", .array(stores.map(JSONValue.string))), ("count", JSONValue(Int64(files.count)))])
        }
        if analysis.baselines.count > 1 {
            add(
                .verifyConcurrentBaselines, .warning, nil, analysis.baselines.map(\.file), "the baselines are concurrent",
                "every merge consolidates them again; a rebase would write one baseline")
        }
        // What a device does with each duplicate folder before it merges (Spec/cloud-layout.md 3.1).
        // Only the files a duplicate shares are looked up, and most folders have no duplicate: a
        // table of every listed file was 84 bytes per event at verify's peak. (The listing holds
        // each folded path once: a duplicate's shared files are not in it.)
        let shared = Set(listing.duplicates.flatMap { $0.shared.map(ExactString.init) })
        var readFrom: [ExactString: String] = [:]
        if !shared.isEmpty {
            for entry in listing.entries {
                let folded = ExactString(listing.foldedPath(entry.path))
                if shared.contains(folded) { readFrom[folded] = entry.path }
            }
        }
        for duplicate in listing.duplicates {
            let differing = duplicate.shared.filter { folded in
                guard let kept = readFrom[ExactString(folded)] else { return false }
                let mine = try? DataFileReader.digest(of: listing.file(duplicate.path + "/" + folded))
                return mine != (try? DataFileReader.digest(of: listing.file(kept)))
            }
            add(
                .verifyDuplicateFolder, .warning, nil, [duplicate.path],
                "a copy of the ensemble folder that a sync service made; \(duplicate.copied.count) of its files are not in the ensemble",
                "a device copies those files into the ensemble and deletes the copy before it merges; files in both are read from the ensemble"
                    + (differing.isEmpty ? "" : ", so the differing ones here are lost"),
                [
                    ("copied", .array(duplicate.copied.map(JSONValue.string))), ("shared", JSONValue(Int64(duplicate.shared.count))),
                    ("differing", .array(differing.map(JSONValue.string))),
                ])
        }
        for debris in contents.debris {
            add(
                .verifyDebris, .warning, nil, [debris.path], debris.reason, "it is never read; it can be removed once it is understood",
                [("kind", .string(debris.kind.rawValue))])
        }
        // Data files are checked as Spec/data-blobs.md 4 says: sizes from fstat, a container
        // against its SHA-256 in chunks; a raw file within its size limit is not read.
        for data in contents.dataFiles {
            do throws(FormatError) {
                try DataFileReader.check(listing.file(data.file))
            } catch {
                add(
                    .verifyUnreadableFile, .error, nil, [data.file], error.message,
                    "the value it holds is lost until an intact copy arrives",
                    [("cause", .string(error.code.rawValue)), ("pointer", .null), ("offset", error.location.offset.map { JSONValue(Int64($0)) } ?? .null)])
            }
        }
        for data in contents.dataFiles where !referenced.contains(ExactString(data.name)) {
            add(
                .verifyOrphanDataFile, .info, nil, [data.file], "no readable event or baseline references this data file",
                "it only takes space, unless an unreadable or missing event needs it")
        }
        var unknownByFile: [ExactString: [String]] = [:]
        for key in contents.unknownKeys { unknownByFile[ExactString(key.file), default: []].append(key.pointer.description) }
        for (file, pointers) in unknownByFile {
            add(
                .verifyUnknownKeys, .info, nil, [file.value], "the file has members this toolkit does not know",
                "they are kept by every rewrite; a newer writer may have added them",
                [("pointers", .array(pointers.sorted(by: utf8Precedes).map(JSONValue.string)))])
        }

        if let objects { diagnostics += objects.diagnostics(replayed: replayed.files) }
        let growth = growth(listing, input, analysis, replayed: replayed, covered: covered)
        return EnsembleVerification(
            identifier: contents.identifier, displayPath: contents.displayPath,
            diagnostics: unique(diagnostics.sorted(by: order)), growth: growth.figures, rebaseReason: growth.rebaseReason)
    }

    /// What the growth figures need of the events to replay, read in one pass over the event
    /// store rather than as a list.
    private struct ReplayedTotals {
        var events = 0
        var counts = SourcedEvent.ChangeCounts()
        /// Stores and files by their bytes: two named in NFC and NFD are two.
        var stores: Set<ExactString> = []
        /// The file of each event replayed (its first part's for a multipart event).
        var files: Set<ExactString> = []
        /// Replayed events made before the baselines: a global count not above theirs, and a
        /// revision set that names some other store lower than they do, or not at all
        /// (Spec/diagnostics.md 4.19d), by store.
        var beforeBaseline: [ExactString: [String]] = [:]

        init(_ analysis: MergeAnalysis) throws(FormatError) {
            let known = analysis.baselineRevisions
            let top = analysis.baselines.map(\.event.globalCount).max() ?? .min
            try analysis.forEachReplayedFields(revisions: known != nil) { event in
                if let known, event.globalCount <= top, let revisionSet = event.revisionSet,
                    known.revisions.contains(where: { !exactlyEqual($0.store, event.store) && (revisionSet[$0.store] ?? -1) < $0.revision })
                {
                    beforeBaseline[ExactString(event.store), default: []].append(event.file)
                }
                events += 1
                files.insert(ExactString(event.file))
                counts.inserts += event.counts.inserts
                counts.updates += event.counts.updates
                counts.deletes += event.counts.deletes
                stores.insert(ExactString(event.store))
            }
        }
    }

    private static func collect(_ sourced: SourcedEvent, into input: inout MergeInput, referenced: inout Set<ExactString>) {
        if sourced.event.type == .baseline { input.baselines.append(sourced) } else { input.events.append(sourced) }
        referenced.formUnion(sourced.dataFileReferences.map(ExactString.init))
    }

    private static func incomplete(_ entry: EventEntry, delivery: JSONValue, into diagnostics: inout [Diagnostic]) {
        diagnostics.append(
            Diagnostic(
                code: .verifyIncompleteMultipart, severity: .warning, number: 203,
                files: sortedUnique(Array(entry.files.values)),
                reason: "parts of a multipart event are missing (it may still be uploading)",
                consequence: "devices will not merge it until every part has arrived",
                details: JSONObject([
                    ("count", JSONValue(Int64(entry.partCount ?? 0))),
                    ("present", .array(entry.files.keys.sorted().map { JSONValue(Int64($0)) })),
                    ("delivery", delivery),
                ])))
    }

    private static func nameMismatches(_ file: String, _ fields: [(String, String, String)], into diagnostics: inout [Diagnostic]) {
        for (field, name, content) in fields where !name.utf8.elementsEqual(content.utf8) {
            diagnostics.append(
                Diagnostic(
                    code: .verifyNameMismatch, severity: .error, number: nil, files: [file],
                    reason: "the file name says \(field) \(name), the content says \(content)",
                    consequence: "tools that trust the name (as the original framework does) will misplace this event",
                    details: JSONObject([("field", .string(field)), ("name", .string(name)), ("content", .string(content))])))
        }
    }

    /// The base name of a part file (`events/7_A_3_2of5.cdeevent` -> `events/7_A_3`), after its
    /// wrapper suffixes (`events/7_A_3_2of5.cdeevent.zip.enc` -> `events/7_A_3`; Spec/wrappers.md 5.3).
    static func partBase(_ file: String) -> String {
        let unwrapped = CloudFileName.strippingWrapperSuffixes(file)
        let stem = unwrapped.hasSuffix(CloudFileName.eventExtension) ? String(unwrapped.dropLast(CloudFileName.eventExtension.count)) : unwrapped
        guard let underscore = stem.lastIndex(of: "_") else { return stem }
        return String(stem[..<underscore])
    }

    /// Identical diagnostics (code, files, details) are listed once; by bytes, so that two files
    /// named in NFC and NFD give two.
    private static func unique(_ sorted: [Diagnostic]) -> [Diagnostic] {
        var seen = Set<ExactString>()
        return sorted.filter {
            seen.insert(ExactString("\($0.code)\u{0}\($0.files.joined(separator: "\u{0}"))\u{0}\(JSONWriter().string(.object($0.details)))")).inserted
        }
    }

    /// Spec/diagnostics.md 5.
    static func order(_ a: Diagnostic, _ b: Diagnostic) -> Bool {
        if a.severity != b.severity { return a.severity < b.severity }
        if a.code != b.code { return a.code < b.code }
        if !exactlyEqual(a.files, b.files) { return a.files.lexicographicallyPrecedes(b.files, by: utf8Precedes) }
        return JSONWriter().string(.object(a.details)).utf8.lexicographicallyPrecedes(JSONWriter().string(.object(b.details)).utf8)
    }

    /// Bytes and files per category, and what a rebase would achieve (Spec/diagnostics.md, growth).
    private static func growth(
        _ listing: EnsembleListing, _ input: MergeInput, _ analysis: MergeAnalysis,
        replayed: ReplayedTotals, covered: [SourcedEvent]
    ) -> (figures: JSONValue, rebaseReason: String?) {
        var bytes: [String: Int64] = ["events": 0, "baselines": 0, "data": 0, "stores": 0, "debris": 0]
        var files: [String: Int64] = ["events": 0, "baselines": 0, "data": 0, "stores": 0, "debris": 0]
        for entry in listing.entries {
            let category: String
            switch entry.entry {
            case .event: category = "events"
            case .baseline: category = "baselines"
            case .dataFile: category = "data"
            case .storeRegistration: category = "stores"
            case .debris: category = "debris"
            }
            // Debris folders and links count no bytes (Spec/diagnostics.md, growth).
            if case .debris(.symlink, _) = entry.entry { files[category, default: 0] += 1; continue }
            bytes[category, default: 0] += entry.size ?? 0
            files[category, default: 0] += 1
        }
        let baselineChanges = analysis.baselines.reduce(0) { $0 + $1.changeCounts.total }
        let inserts = replayed.counts.inserts, updates = replayed.counts.updates, deletes = replayed.counts.deletes
        let b = Double(baselineChanges), i = Double(inserts), u = Double(updates), d = Double(deletes)
        let compaction = 1 - (b - d + i) / max(1, b + i + 0.2 * u)
        let storesWithEvents = replayed.stores.union(covered.map { ExactString($0.event.storeIdentifier) })
        let missesStore = storesWithEvents.contains { analysis.baselineRevisions?[$0.value] == nil }
        let changes = baselineChanges + inserts + updates + deletes
        let reasons: [(holds: Bool, reason: String)] = [
            (analysis.baselines.isEmpty, "no baseline takes part"),
            (missesStore, "a store with events is not in the baselines' revision set"),
            (replayed.events > 50, "\(replayed.events) events to replay, more than 50"),
            (changes >= 500 && compaction > 0.5, "\(changes) changes, compaction above 0.5"),
        ]
        let rebaseReason = reasons.first(where: \.holds)?.reason
        let recommended = rebaseReason != nil
        func object(_ values: [String: Int64]) -> JSONValue {
            .object(JSONObject(values.map { ($0.key, JSONValue($0.value)) }))
        }
        let figures = JSONValue.object(
            JSONObject([
                ("bytes", object(bytes)),
                ("files", object(files)),
                // Every readable save or merge event, duplicates and conflicting copies included.
                ("events", JSONValue(Int64(input.events.count(where: { $0.event.type == .save || $0.event.type == .merge })))),
                ("coveredEvents", JSONValue(Int64(covered.count))),
                ("baselineChanges", JSONValue(Int64(baselineChanges))),
                ("inserts", JSONValue(Int64(inserts))),
                ("updates", JSONValue(Int64(updates))),
                ("deletes", JSONValue(Int64(deletes))),
                ("compaction", JSONValue(compaction)),
                ("rebaseRecommended", .bool(recommended)),
            ]))
        return (figures, rebaseReason)
    }
}
