import EnsemblesToolkit
import FileWrappers
import Foundation
import JSONDocument
import SchemaValidation
import Testing

@testable import TICDS

/// Every case of Fixtures/ticds, written by the independent generator `scripts/ticds-generate.py`:
/// its `facts.json` says what the folder holds and what the framework would do; the toolkit's
/// `inspect` and `verify` output must say the same. Replays (`replays`, conflicts included) are
/// checked in TICDSReplayTests.
@Suite("TICDS facts")
struct TICDSFactsTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/ticds")

    static let cases: [String] =
        ((try? FileManager.default.contentsOfDirectory(atPath: fixtures.path)) ?? [])
        .filter { FileManager.default.fileExists(atPath: fixtures.appendingPathComponent("\($0)/facts.json").path) }.sorted()

    /// A copy of the case's folder with the modification times of `fileDates` and the empty
    /// folders of `emptyFolders` (git keeps neither); returns the copy's root and the facts.
    static func prepare(_ name: String, settingDates: Bool = true) throws -> (root: URL, facts: JSONValue) {
        let source = fixtures.appendingPathComponent(name)
        let facts = try JSONParser.parse(Array(try Data(contentsOf: source.appendingPathComponent("facts.json"))))
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("ticds-facts-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: source.appendingPathComponent("folder"), to: copy)
        for folder in facts[JSONPointer(["emptyFolders"])]?.arrayValue ?? [] {
            if let path = folder.stringValue {
                try FileManager.default.createDirectory(at: copy.appendingPathComponent(path), withIntermediateDirectories: true)
            }
        }
        for (path, date) in facts[JSONPointer(["fileDates"])]?.objectValue?.members ?? [] {
            // Without the dates: every file one date, as a copy that lost them.
            guard let seconds = settingDates ? date.numberValue?.doubleValue : 1_700_000_000 else { continue }
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: seconds)], ofItemAtPath: copy.appendingPathComponent(path).path)
        }
        return (copy, facts)
    }

    static func member(_ value: JSONValue?, _ path: String...) -> JSONValue? { value?[JSONPointer(path)] }
    static func text(_ value: JSONValue?) -> String? { value?.stringValue }
    static func number(_ value: JSONValue?) -> Double? { value?.numberValue?.doubleValue }

    static func ensemble(_ root: URL, facts: JSONValue) -> Ensemble {
        var options = Ensemble.Options()
        if let password = text(member(facts, "encryption", "passwordToUse")) { options.password = PasswordSource(password: password) }
        return Ensemble(at: root.appendingPathComponent(text(member(facts, "root")) ?? ""), options: options)
    }

    /// The generator's replay orders (every set of any client its WholeStore had not applied, in
    /// the framework's order) against the toolkit's order of all sets, restricted to those sets.
    static func checkReplayOrders(_ report: JSONValue, _ facts: JSONValue, _ name: String) {
        for document in member(facts, "documents")?.arrayValue ?? [] {
            let doc = (member(report, "documents")?.arrayValue ?? []).first { member($0, "identifier") == member(document, "id") }
            let mine = (member(doc, "sets")?.arrayValue ?? []).compactMap { text(member($0, "identifier")) }
            for (client, replay) in member(document, "replays")?.objectValue?.members ?? [] {
                let expected = (member(replay, "order")?.arrayValue ?? []).compactMap { text(member($0, "id")) }
                #expect(mine.filter(Set(expected).contains) == expected, "\(name) replay of \(client)")
            }
        }
    }

    @Test("the fixtures are there")
    func present() {
        #expect(Self.cases.count >= 16)
    }

    @Test("inspect says what facts.json says: clients, documents, sets, changes, WholeStores", arguments: cases)
    func inspect(_ name: String) throws {
        let (root, facts) = try Self.prepare(name)
        defer { try? FileManager.default.removeItem(at: root) }
        let app = (Self.text(Self.member(facts, "root")) ?? "") + "/"
        func relative(_ path: String?) -> String? { path.map { $0.hasPrefix(app) ? String($0.dropFirst(app.count)) : $0 } }
        let report = try Self.ensemble(root, facts: facts).inspectTICDS()
        #expect(try BundledSchema.inspect.validator().validate(report).isEmpty, "\(name)")
        Self.checkReplayOrders(report, facts, name)
        // Clients with a ClientDevices folder, and whether each has deviceInfo.plist.
        let clients = (Self.member(facts, "clients")?.arrayValue ?? []).filter { Self.member($0, "clientDevicesFolder") == .bool(true) }
        let shown = Self.member(report, "clients")?.arrayValue ?? []
        #expect(Set(shown.compactMap { Self.text(Self.member($0, "identifier")) }) == Set(clients.compactMap { Self.text(Self.member($0, "id")) }), "\(name)")
        for client in clients {
            let mine = shown.first { Self.member($0, "identifier") == Self.member(client, "id") }
            let info = Self.member(client, "deviceInfo")
            #expect((Self.member(mine, "deviceInfo") == .null) == (info == .null), "\(name)")
            if let description = Self.member(info, "fields", "kTICDSClientDeviceDescription"), Self.member(report, "encryption", "password") != .string("wrong")
            {
                #expect(Self.member(mine, "description") == description, "\(name)")
            }
        }
        let documents = Self.member(facts, "documents")?.arrayValue ?? []
        let mine = Self.member(report, "documents")?.arrayValue ?? []
        #expect(mine.count == documents.count, "\(name)")
        let wrongPassword = Self.member(report, "encryption", "password") == .string("wrong")
        for document in documents {
            let doc = mine.first { Self.member($0, "identifier") == Self.member(document, "id") }
            #expect(doc != nil, "\(name)")
            let sets = Self.member(doc, "sets")?.arrayValue ?? []
            let expectedSets = Self.member(document, "changeSets")?.arrayValue ?? []
            #expect(
                Set(sets.compactMap { Self.text(Self.member($0, "identifier")) }) == Set(expectedSets.compactMap { Self.text(Self.member($0, "id")) }),
                "\(name)")
            // The toolkit's order is the framework's: by the file's date, then the identifier.
            let dates = sets.compactMap { Self.number(Self.member($0, "file", "modified")) }
            #expect(dates == dates.sorted(), "\(name)")
            for expected in expectedSets where Self.member(expected, "readable") == .bool(true) && !wrongPassword {
                let set = sets.first { Self.member($0, "identifier") == Self.member(expected, "id") }
                #expect(Self.member(set, "form") == Self.member(expected, "form"), "\(name) \(Self.text(Self.member(expected, "id")) ?? "")")
                #expect(Self.number(Self.member(set, "file", "modified")) == Self.number(Self.member(expected, "mtime")), "\(name)")
                guard let changes = Self.member(expected, "changes")?.arrayValue else {
                    #expect(Self.member(set, "changes") == .null, "\(name)")
                    continue
                }
                let decoded = (Self.member(set, "changes")?.arrayValue ?? []).sorted {
                    (Self.number(Self.member($0, "primaryKey")) ?? 0) < (Self.number(Self.member($1, "primaryKey")) ?? 0)
                }
                #expect(decoded.count == changes.count, "\(name)")
                for (row, fact) in zip(decoded, changes) {
                    #expect(Self.number(Self.member(row, "primaryKey")) == Self.number(Self.member(fact, "pk")), "\(name)")
                    #expect(Self.number(Self.member(row, "changeType")) == Self.number(Self.member(fact, "changeType")), "\(name)")
                    #expect(Self.member(row, "entity") == Self.member(fact, "entity"), "\(name)")
                    #expect(Self.member(row, "syncID") == Self.member(fact, "syncID"), "\(name)")
                    #expect(Self.member(row, "relevantKey") == Self.member(fact, "key"), "\(name)")
                    #expect(Self.member(row, "relatedEntity") == Self.member(fact, "relatedEntity"), "\(name)")
                    // Core Data's seconds since 2001; facts give seconds since 1970.
                    let stamp = Self.number(Self.member(row, "localTimeStamp")).map { $0 + 978_307_200 }
                    #expect(stamp == Self.number(Self.member(fact, "localTimeStamp")), "\(name)")
                    #expect(Self.member(row, "changedRelationships") == Self.member(fact, "changedRelationships"), "\(name)")
                    let attributes = Self.member(fact, "changedAttributes")
                    if case .string? = attributes { #expect(Self.member(row, "changedAttributes") == attributes, "\(name)") }
                    if let object = attributes?.objectValue {
                        for (key, value) in object.members where value.stringValue != nil {
                            #expect(Self.member(row, "changedAttributes", key) == value, "\(name) \(key)")
                        }
                    }
                }
            }
            // Each client's view: what it applied, what it applies next, in the framework's order.
            let views = Self.member(doc, "clientViews")?.objectValue?.members ?? []
            let expectedViews = Self.member(document, "clientViews")?.objectValue?.members ?? []
            #expect(views.map(\.key).sorted() == expectedViews.map(\.key).sorted(), "\(name)")
            for (client, expected) in expectedViews where !wrongPassword {
                let view = views.first { $0.key == client }?.value
                let next = (Self.member(view, "next")?.arrayValue ?? []).map {
                    [Self.text(Self.member($0, "client")), Self.text(Self.member($0, "identifier")), Self.number(Self.member($0, "modified")).map { "\($0)" }]
                }
                let expectedNext = (Self.member(expected, "next")?.arrayValue ?? []).map {
                    [Self.text(Self.member($0, "client")), Self.text(Self.member($0, "id")), Self.number(Self.member($0, "date")).map { "\($0)" }]
                }
                #expect(next == expectedNext, "\(name) \(client)")
                let applied = Self.member(expected, "appliedSetIds")
                #expect((Self.member(view, "appliedSets") == .null) == (applied == .null), "\(name) \(client)")
            }
            // The WholeStore a downloading client takes (null on a tie).
            #expect(
                Set((Self.member(doc, "wholeStoreDownload", "candidates")?.arrayValue ?? []).compactMap(\.stringValue))
                    == Set((Self.member(document, "wholeStoreDownloadCandidates")?.arrayValue ?? []).compactMap(\.stringValue)), "\(name)")
            #expect(Self.member(doc, "wholeStoreDownload", "wouldTake") == Self.member(document, "wholeStoreDownloadWouldTake"), "\(name)")
            for whole in Self.member(document, "wholeStores")?.arrayValue ?? [] where !wrongPassword {
                let shownStore = (Self.member(doc, "wholeStores")?.arrayValue ?? []).first { Self.member($0, "client") == Self.member(whole, "client") }
                #expect(Self.member(shownStore, "store", "uuid") == Self.member(whole, "storeUUID"), "\(name)")
                let layers =
                    (Self.member(whole, "encrypted") == .bool(true) ? ["encrypted"] : []) + (Self.member(whole, "zipped") == .bool(true) ? ["zip"] : [])
                #expect(Self.member(shownStore, "layers") == .array(layers.map(JSONValue.string)), "\(name)")
                let applied = (Self.member(whole, "appliedSets")?.arrayValue ?? []).compactMap { Self.text(Self.member($0, "id")) }
                #expect(Set((Self.member(shownStore, "appliedSets")?.arrayValue ?? []).compactMap(\.stringValue)) == Set(applied), "\(name)")
                _ = relative
            }
        }
    }

    static func findings(_ diagnostics: [Diagnostic], _ code: String) -> [Diagnostic] { diagnostics.filter { $0.code.rawValue == code } }

    @Test("verify finds each damage facts.json lists, unapplied sets and the next vacuum as facts.json says", arguments: cases)
    func verify(_ name: String) throws {
        let (root, facts) = try Self.prepare(name)
        defer { try? FileManager.default.removeItem(at: root) }
        let app = (Self.text(Self.member(facts, "root")) ?? "") + "/"
        func relative(_ path: String) -> String { path.hasPrefix(app) ? String(path.dropFirst(app.count)) : path }
        let found = try Self.ensemble(root, facts: facts).verifyTICDS(now: Self.number(Self.member(facts, "now")) ?? 0)
        // A damage kind and the codes that report it: a cut file is `ticds.truncated` when it is
        // an FZACryptor file, `ticds.invalid-change-set` when it is a plain SQLite set SQLite cannot read.
        let codes: [String: [String]] = [
            "wrong-password": ["ticds.wrong-password"], "tampered-hmac": ["ticds.bad-hmac"], "truncated": ["ticds.truncated", "ticds.invalid-change-set"],
            "binary-store-set": ["file.kind-binary-store"], "no-device-info": ["ticds.client-without-device-info"],
            "unknown-client": ["ticds.unknown-client"], "integrity-key-mismatch": ["ticds.integrity-key-ambiguous"],
            "temporary-upload": ["ticds.temporary-files"], "same-dates": ["ticds.same-dates"], "future-dates": ["ticds.future-dates"],
        ]
        for damage in Self.member(facts, "damages")?.arrayValue ?? [] {
            guard let kind = Self.text(Self.member(damage, "kind")), let reporting = codes[kind], let file = Self.text(Self.member(damage, "file")) else {
                continue
            }
            let path = relative(file).hasSuffix("/") ? String(relative(file).dropLast()) : relative(file)
            let matching = found.filter { finding in
                reporting.contains(finding.code.rawValue) && finding.files.contains { $0 == path || $0.hasPrefix(path + "/") }
            }
            #expect(!matching.isEmpty, "\(name): no \(reporting) naming \(path); found \(found.map { "\($0.code) \($0.files)" })")
        }
        // Nothing is called damaged that the generator did not damage.
        let damaged = Set(Self.member(facts, "damages")?.arrayValue?.flatMap { Self.text(Self.member($0, "kind")).flatMap { codes[$0] } ?? [] } ?? [])
        for finding in found where finding.severity == .error || finding.code.rawValue.hasPrefix("file.kind") {
            #expect(damaged.contains(finding.code.rawValue), "\(name): unexpected \(finding.code) \(finding.files)")
        }
        let wrongPassword = damaged.contains("ticds.wrong-password")
        for document in Self.member(facts, "documents")?.arrayValue ?? [] where !wrongPassword {
            let identifier = Self.text(Self.member(document, "id")) ?? ""
            // What each client with a known AppliedSyncChangeSets applies next, in the framework's order.
            for (client, view) in Self.member(document, "clientViews")?.objectValue?.members ?? [] {
                guard Self.member(view, "appliedSetIds") != .null else { continue }
                let next = (Self.member(view, "next")?.arrayValue ?? []).compactMap { Self.text(Self.member($0, "id")) }
                let finding = Self.findings(found, "ticds.unapplied-sets").first {
                    $0.details["client"] == .string(client) && $0.details["document"] == .string(identifier)
                }
                #expect((finding?.details["sets"]?.arrayValue ?? []).compactMap(\.stringValue) == next, "\(name) \(client)")
            }
            // The next vacuum: the cut-off and the sets older than it.
            let removed = (Self.member(document, "vacuum", "wouldRemove")?.objectValue?.members ?? []).flatMap { $0.1.arrayValue ?? [] }.compactMap(
                \.stringValue)
            let vacuum = Self.findings(found, "ticds.vacuum-would-remove").first { $0.details["document"] == .string(identifier) }
            let files = vacuum?.files ?? []
            #expect(
                Set(files.map { URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent }) == Set(removed), "\(name)")
            if let vacuum {
                #expect(Self.number(vacuum.details["cutoff"]) == Self.number(Self.member(document, "vacuum", "keepFrom")), "\(name)")
            }
        }
    }

    @Test(
        "a copy without its dates, read with --dates from facts.json's fileDates, gives the framework's order",
        arguments: ["healthy", "future-dates", "same-dates"])
    func datesFile(_ name: String) throws {
        let (root, facts) = try Self.prepare(name, settingDates: false)
        defer { try? FileManager.default.removeItem(at: root) }
        let app = (Self.text(Self.member(facts, "root")) ?? "") + "/"
        // same-dates also gives the dates its files had before they were lost, and the facts under them.
        let original = Self.member(facts, "withOriginalDates") ?? facts
        let dates = JSONObject(
            (Self.member(original, "fileDates")?.objectValue?.members ?? []).compactMap { path, date in
                path.hasPrefix(app) ? (String(path.dropFirst(app.count)), date) : nil
            })
        let datesFile = root.appendingPathComponent("dates.json")
        try Data(JSONWriter().bytes(.object(dates))).write(to: datesFile)
        let report = try Self.ensemble(root, facts: facts).inspectTICDS(datesFile: datesFile.path)
        Self.checkReplayOrders(report, original, name)
        for document in Self.member(original, "documents")?.arrayValue ?? [] {
            let doc = (Self.member(report, "documents")?.arrayValue ?? []).first { Self.member($0, "identifier") == Self.member(document, "id") }
            for (client, expected) in Self.member(document, "clientViews")?.objectValue?.members ?? [] {
                let next = (Self.member(doc, "clientViews", client, "next")?.arrayValue ?? []).map { Self.text(Self.member($0, "identifier")) }
                let expectedNext = (Self.member(expected, "next")?.arrayValue ?? []).map { Self.text(Self.member($0, "id")) }
                #expect(next == expectedNext, "\(name) \(client)")
            }
            #expect(Self.member(doc, "wholeStoreDownload", "wouldTake") == Self.member(document, "wholeStoreDownloadWouldTake"), "\(name)")
        }
        try Data("[1]".utf8).write(to: datesFile)
        #expect(throws: EnsembleError.self) { try Self.ensemble(root, facts: facts).inspectTICDS(datesFile: datesFile.path) }
    }
}
