import CSQLite
import DataModel
import Foundation
import Testing
import EnsemblesToolkit
import EventCodecs
import JSONDocument
import MergeEngine
@testable import LogToolCore

/// Names are told apart and ordered by their UTF-8 bytes (Spec/README.md 4, "string order").
/// Swift's `==` and hashing call "café" in NFC (bytes 63 61 66 C3 A9) and in NFD (63 61 66 65 CC 81)
/// equal: an order that asked it first took the next key instead and put the NFC name first, and
/// a set or dictionary keyed by such names took two files or stores for one.
@Suite("Names that differ only in normalisation")
struct ByteOrderTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    /// Whether this file system keeps a name in NFC and in NFD as two files (Linux file systems
    /// do; APFS takes them for one): the tests that put both in one folder need it.
    static let namesKeptApart: Bool = {
        guard let folder = try? scratchDirectory() else { return false }
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in [nfc, nfd] { try? Data().write(to: folder.appendingPathComponent(name)) }
        return (try? FileManager.default.contentsOfDirectory(atPath: folder.path).count) == 2
    }()
    static let bothNames = Testing.ConditionTrait.enabled(if: namesKeptApart, "the file system takes a name in NFC and in NFD for one file")

    /// The example folder copied into a scratch folder: (scratch, ensemble folder).
    static func example() throws -> (scratch: URL, ensemble: URL) {
        let scratch = try scratchDirectory()
        try FileManager.default.copyItem(
            at: Run.packageRoot.appendingPathComponent("Fixtures/folders/example/cloud"), to: scratch.appendingPathComponent("cloud"))
        return (scratch, scratch.appendingPathComponent("cloud/MainStore"))
    }

    /// A v2 JSON event of `store` with the given type and global count (JSON text) and `extra`
    /// members at the top level.
    static func event(
        store: String, type: String = "200", globalCount: String = "50", extra: String = #""x":0"#, changes: String = "{}"
    ) -> Data {
        let text = """
            {"changesByEntity":\(changes),"globalCount":\(globalCount),"revisionsByStoreIdentifier":{"\(store)":0},"storeIdentifier":"\(store)",\
            "timestamp":"731336181.321","type":\(type),"uniqueIdentifier":"E-\(store)",\(extra)}
            """
        return Data(text.utf8)
    }

    static func bytes(_ values: [JSONValue]) -> [[UInt8]] { values.compactMap { $0.stringValue.map { Array($0.utf8) } } }

    /// Registers the NFC and the NFD store in `ensemble`, each with a copy of the registration
    /// `template` of the store `named`.
    static func registerBoth(in ensemble: URL, copying template: URL, of named: String) throws {
        let registration = try String(contentsOf: template, encoding: .utf8)
        for store in [nfc, nfd] {
            try Data(registration.replacingOccurrences(of: named, with: store).utf8).write(to: ensemble.appendingPathComponent("stores/\(store)"))
        }
    }

    /// Writes events/50_A1B2C3D4-STORE-ALPHA_12.cdeevent: an insert whose attribute is held in
    /// the data file `name`.
    static func writeEventNaming(dataFile name: String, in ensemble: URL) throws {
        let change = #"{"Tag":[{"globalIdentifier":"tag-d","properties":[{"propertyName":"icon","type":0,"filename":"\#(name)"}],"type":100}]}"#
        let text = """
            {"changesByEntity":\(change),"globalCount":50,"revisionsByStoreIdentifier":{"A1B2C3D4-STORE-ALPHA":12},\
            "storeIdentifier":"A1B2C3D4-STORE-ALPHA","timestamp":"1.0","type":200,"uniqueIdentifier":"UD"}
            """
        try Data(text.utf8).write(to: ensemble.appendingPathComponent("events/50_A1B2C3D4-STORE-ALPHA_12.cdeevent"))
    }

    @Test("IntegrityProblem.reportPrecedes orders files by bytes before details")
    func problems() {
        let nfcFirstDetail = IntegrityProblem(
            code: .init("merge.x"), number: nil, files: [Self.nfc], message: "", details: JSONObject([("n", JSONValue(Int64(1)))]))
        let nfdSecondDetail = IntegrityProblem(
            code: .init("merge.x"), number: nil, files: [Self.nfd], message: "", details: JSONObject([("n", JSONValue(Int64(2)))]))
        #expect(IntegrityProblem.reportPrecedes(nfdSecondDetail, nfcFirstDetail))
        #expect(!IntegrityProblem.reportPrecedes(nfcFirstDetail, nfdSecondDetail))
    }

    @Test("verify orders two debris entries by their names' bytes, not by their kinds", ByteOrderTests.bothNames)
    func verifyDebris() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        // The NFD name a symbolic link (kind symlink), the NFC one a conflicted copy: by kind the
        // NFC one would come first.
        let events = ensemble.appendingPathComponent("events")
        try FileManager.default.createSymbolicLink(atPath: events.appendingPathComponent("\(Self.nfd) (1)").path, withDestinationPath: "nowhere")
        try Data("x".utf8).write(to: events.appendingPathComponent("\(Self.nfc) (1)"))
        let run = try Run("verify", "--json", ensemble.path)
        let diagnostics = try JSONParser.parse(run.stdout)[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
        let debris = diagnostics.filter { $0[JSONPointer(["files", "0"])]?.stringValue?.hasPrefix("events/caf") == true }
        let files = Self.bytes(debris.compactMap { $0[JSONPointer(["files", "0"])] })
        #expect(files == [Array("events/\(Self.nfd) (1)".utf8), Array("events/\(Self.nfc) (1)".utf8)])
        #expect(debris.map { $0[JSONPointer(["details", "kind"])] } == [.string("symlink"), .string("conflictedCopy")], "\(run.stdout)")
    }

    @Test("inspect orders unknown keys by their files' bytes before their pointers", ByteOrderTests.bothNames)
    func inspectUnknownKeys() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let events = ensemble.appendingPathComponent("events")
        try Self.event(store: Self.nfd, extra: #""zz":1"#).write(to: events.appendingPathComponent("50_\(Self.nfd)_0.cdeevent"))
        try Self.event(store: Self.nfc, extra: #""aa":1"#).write(to: events.appendingPathComponent("50_\(Self.nfc)_0.cdeevent"))
        let run = try Run("inspect", "--json", ensemble.path)
        let keys = try JSONParser.parse(run.stdout)[JSONPointer(["ensembles", "0", "unknownKeys"])]?.arrayValue ?? []
        #expect(keys.map { $0[JSONPointer(["pointer"])] } == [.string("/zz"), .string("/aa")], "\(run.stdout)")
    }

    @Test("convert --json orders its errors by their files' bytes before their pointers", ByteOrderTests.bothNames)
    func convertErrors() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let events = ensemble.appendingPathComponent("events")
        try Self.event(store: Self.nfd, type: #""x""#).write(to: events.appendingPathComponent("50_\(Self.nfd)_0.cdeevent"))
        try Self.event(store: Self.nfc, globalCount: #""x""#).write(to: events.appendingPathComponent("50_\(Self.nfc)_0.cdeevent"))
        let run = try Run("convert", "--json", ensemble.path, scratch.appendingPathComponent("out").path)
        let errors = try JSONParser.parse(run.stdout)[JSONPointer(["errors"])]?.arrayValue ?? []
        // Whether each error of the two files is the NFD file's (its name holds the byte CC).
        let nfd = errors.compactMap { $0[JSONPointer(["file"])]?.stringValue }.filter { $0.contains("50_caf") }.map { Array($0.utf8).contains(0xCC) }
        #expect(nfd.contains(true) && nfd.contains(false), "\(run.stdout)")
        #expect(nfd == nfd.sorted { $0 && !$1 }, "\(run.stdout)")
    }

    @Test("an event whose revision set names both spellings gives one of them in revisionsByStoreIdentifier, without a crash")
    func revisionsByStoreIdentifier() throws {
        let json = try JSONParser.parse(
            Array(
                """
                {"changesByEntity":{},"globalCount":5,"revisionsByStoreIdentifier":{"\(Self.nfc)":1,"\(Self.nfd)":2},\
                "storeIdentifier":"\(Self.nfc)","timestamp":"0.0","type":200,"uniqueIdentifier":"U"}
                """.utf8))
        let revisions = try V2JSONDecoder().decodeEvent(json).event.revisionsByStoreIdentifier
        // The NFD spelling comes first in string order.
        #expect(revisions.count == 1 && revisions[Self.nfc] == 2)
    }

    @Test("a duplicate folder's file named in NFD beside the ensemble's in NFC is copied, not taken for the same file")
    func duplicateFolderFold() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Self.event(store: Self.nfc).write(to: ensemble.appendingPathComponent("events/50_\(Self.nfc)_0.cdeevent"))
        let copy = scratch.appendingPathComponent("cloud/MainStore 2/events")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        try Self.event(store: Self.nfd).write(to: copy.appendingPathComponent("50_\(Self.nfd)_0.cdeevent"))
        let run = try Run("inspect", "--json", ensemble.path)
        let folders = try JSONParser.parse(run.stdout)[JSONPointer(["ensembles", "0", "duplicateFolders"])]?.arrayValue ?? []
        let copied = Self.bytes(folders.first?[JSONPointer(["copied"])]?.arrayValue ?? [])
        #expect(copied == [Array("events/50_\(Self.nfd)_0.cdeevent".utf8)], "\(run.stdout)")
    }

    @Test("two unreadable files named in NFC and NFD are two findings of verify and two entries of inspect", ByteOrderTests.bothNames)
    func unreadableTwice() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        for name in [Self.nfc, Self.nfd] { try Data("{".utf8).write(to: ensemble.appendingPathComponent("events/50_\(name)_0.cdeevent")) }
        let verify = try Run("verify", "--json", ensemble.path)
        let diagnostics = try JSONParser.parse(verify.stdout)[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
        let unreadable = diagnostics.filter { $0[JSONPointer(["code"])] == .string("verify.unreadable-file") }
        #expect(unreadable.count == 2, "\(verify.stdout)")
        let inspect = try Run("inspect", "--json", ensemble.path)
        #expect((try JSONParser.parse(inspect.stdout)[JSONPointer(["ensembles", "0", "unreadable"])]?.arrayValue ?? []).count == 2, "\(inspect.stdout)")
    }

    @Test("an accept list records each file's own digest when two debris files differ only in normalisation", ByteOrderTests.bothNames)
    func acceptListDigests() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Data("a".utf8).write(to: ensemble.appendingPathComponent("events/\(Self.nfc) (1)"))
        try Data("b".utf8).write(to: ensemble.appendingPathComponent("events/\(Self.nfd) (1)"))
        let list = scratch.appendingPathComponent("accept.json").path
        _ = try Run("verify", "--write-accept", list, ensemble.path)
        let entries = try JSONParser.parse(try Data(contentsOf: URL(fileURLWithPath: list)))[JSONPointer(["accepted"])]?.arrayValue ?? []
        let digests = entries.filter { $0[JSONPointer(["files", "0"])]?.stringValue?.hasPrefix("events/caf") == true }
            .compactMap { $0[JSONPointer(["sha256"])]?.objectValue?.members.first?.value.stringValue }
        // SHA-256 of "b" (the NFD file, first in string order), then of "a" (sha256sum's figures).
        #expect(
            digests == [
                "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d",
                "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
            ], "\(entries)")
    }

    @Test("two stores named in NFC and NFD that insert one object without knowing each other insert it concurrently; inspect lists two stores")
    func twoStores() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let insert = #"{"Tag":[{"globalIdentifier":"tag-twice","properties":[{"propertyName":"name","type":0,"value":"x"}],"type":100}]}"#
        try Self.event(store: Self.nfc, globalCount: "50", changes: insert).write(to: ensemble.appendingPathComponent("events/50_\(Self.nfc)_0.cdeevent"))
        try Data(
            String(decoding: Self.event(store: Self.nfd, globalCount: "51", changes: insert), as: UTF8.self)
                .replacingOccurrences(of: #"{"\#(Self.nfd)":0}"#, with: #"{"\#(Self.nfd)":1}"#).utf8
        ).write(to: ensemble.appendingPathComponent("events/51_\(Self.nfd)_1.cdeevent"))
        let verify = try Run("verify", "--json", ensemble.path)
        let codes = (try JSONParser.parse(verify.stdout)[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? [])
            .filter { $0[JSONPointer(["details", "globalIdentifier"])] == .string("tag-twice") }.compactMap { $0[JSONPointer(["code"])]?.stringValue }
        #expect(codes == ["verify.concurrent-insert"], "\(verify.stdout)")
        let inspect = try Run("inspect", "--json", ensemble.path)
        let stores = (try JSONParser.parse(inspect.stdout)[JSONPointer(["ensembles", "0", "stores"])]?.arrayValue ?? [])
            .filter { $0[JSONPointer(["identifier"])]?.stringValue?.hasPrefix("caf") == true }
        #expect(Self.bytes(stores.compactMap { $0[JSONPointer(["identifier"])] }) == [Array(Self.nfd.utf8), Array(Self.nfc.utf8)], "\(inspect.stdout)")
        #expect(stores.map { $0[JSONPointer(["events"])] } == [JSONValue(Int64(1)), JSONValue(Int64(1))], "\(inspect.stdout)")
    }

    @Test("two files named in NFC and NFD that claim one revision with different contents are a conflicting revision", ByteOrderTests.bothNames)
    func conflictingCopies() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        // Both name the NFC store (the NFD file's name does not match its content).
        for (name, value) in [(Self.nfc, "a"), (Self.nfd, "b")] {
            let insert = #"{"Tag":[{"globalIdentifier":"tag-\#(value)","properties":[],"type":100}]}"#
            try Self.event(store: Self.nfc, changes: insert).write(to: ensemble.appendingPathComponent("events/50_\(name)_0.cdeevent"))
        }
        let run = try Run("merge", "--json", ensemble.path)
        let codes = (try JSONParser.parse(run.stdout)[JSONPointer(["errors"])]?.arrayValue ?? []).compactMap { $0[JSONPointer(["code"])]?.stringValue }
        #expect(codes.contains("merge.conflicting-revision"), "\(run.stdout)")
    }

    @Test("an iCloud placeholder of data/café in NFD does not make a missing data/café in NFC pending")
    func deliveryByBytes() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Self.writeEventNaming(dataFile: Self.nfc, in: ensemble)
        try Data("x".utf8).write(to: ensemble.appendingPathComponent("data/.\(Self.nfd).icloud"))
        let run = try Run("verify", "--json", ensemble.path)
        let missing = (try JSONParser.parse(run.stdout)[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? [])
            .filter { $0[JSONPointer(["code"])] == .string("verify.missing-data-file") }
        #expect(missing.map { $0[JSONPointer(["details", "delivery"])] } == [.string("missing")], "\(run.stdout)")
    }

    @Test("part 1 of a set of the NFC store and part 2 of the NFD store's, given directly, are two incomplete sets, not one event")
    func partsOfTwoSets() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let parts = Run.packageRoot.appendingPathComponent("Fixtures/v2-json/multipart")
        let first = scratch.appendingPathComponent("7_\(Self.nfc)_3_1of2.cdeevent"), second = scratch.appendingPathComponent("7_\(Self.nfd)_3_2of2.cdeevent")
        try FileManager.default.copyItem(at: parts.appendingPathComponent("7_STORE-A_3_1of2.cdeevent"), to: first)
        try FileManager.default.copyItem(at: parts.appendingPathComponent("7_STORE-A_3_2of2.cdeevent"), to: second)
        let run = try Run("merge", "--json", first.path, second.path)
        let errors = try JSONParser.parse(run.stdout)[JSONPointer(["errors"])]?.arrayValue ?? []
        #expect(errors.map { $0[JSONPointer(["code"])] } == [.string("merge.incomplete-data"), .string("merge.incomplete-data")], "\(run.stdout)")
    }

    @Test("the cure finds the lost revision of the NFC store although the NFD store holds that revision", ByteOrderTests.bothNames)
    func cureLostByBytes() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let folder = scratch.appendingPathComponent("case")
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/repair-cure/lost-one"), to: folder)
        let ensemble = folder.appendingPathComponent("cloud/E")
        try Self.registerBoth(in: ensemble, copying: ensemble.appendingPathComponent("stores/STORE-AAAA"), of: "STORE-AAAA")
        // The NFC store's revisions 0 and 2, the NFD store's 1: the NFC store lost its revision 1.
        for (count, store, revision) in [(10, Self.nfc, 0), (11, Self.nfd, 1), (12, Self.nfc, 2)] {
            let text = """
                {"changesByEntity":{},"globalCount":\(count),"revisionsByStoreIdentifier":{"\(store)":\(revision)},"storeIdentifier":"\(store)",\
                "timestamp":"1.0","type":200,"uniqueIdentifier":"U\(count)"}
                """
            try Data(text.utf8).write(to: ensemble.appendingPathComponent("events/\(count)_\(store)_\(revision).cdeevent"))
        }
        let run = try Run(arguments: ["repair", "cloud/E", "--cure-lost", "--model", "Model.xcdatamodeld", "--json"], in: folder)
        let lost = try JSONParser.parse(run.stdout)[JSONPointer(["plan", "actions", "0", "cure", "lost"])]?.arrayValue ?? []
        let stores = Self.bytes(lost.compactMap { $0[JSONPointer(["store"])] })
        #expect(stores == [Array("STORE-AAAA".utf8), Array(Self.nfc.utf8)], "\(run.stdout)")
    }

    @Test("verify recommends a rebase when the NFD store has events and only the NFC store is in the baseline", ByteOrderTests.bothNames)
    func rebaseReasonByBytes() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = scratch.appendingPathComponent("E")
        for folder in ["stores", "events", "baselines"] {
            try FileManager.default.createDirectory(at: ensemble.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try Self.registerBoth(
            in: ensemble, copying: Run.packageRoot.appendingPathComponent("Fixtures/repair-cure/lost-one/cloud/E/stores/STORE-AAAA"), of: "STORE-AAAA")
        for (path, count, store, revision, type) in [
            ("baselines/1_B0.cdeevent", 1, Self.nfc, 0, 100), ("events/2_\(Self.nfc)_1.cdeevent", 2, Self.nfc, 1, 200),
            ("events/3_\(Self.nfd)_0.cdeevent", 3, Self.nfd, 0, 200),
        ] {
            let text = """
                {"changesByEntity":{},"globalCount":\(count),"revisionsByStoreIdentifier":{"\(store)":\(revision)},"storeIdentifier":"\(store)",\
                "timestamp":"1.0","type":\(type),"uniqueIdentifier":"U\(count)"}
                """
            try Data(text.utf8).write(to: ensemble.appendingPathComponent(path))
        }
        // Two events, no changes: the store missing from the baseline is the only reason.
        let run = try Run("verify", "--json", ensemble.path)
        #expect(try JSONParser.parse(run.stdout)[JSONPointer(["ensembles", "0", "growth", "rebaseRecommended"])] == .bool(true), "\(run.stdout)")
    }

    @Test("the conformance runner tells a finding that names the NFD file from the expected one that names the NFC file")
    func runnerComparesBytes() {
        let expected = Data(#"{"errors":[{"code":"merge.unregistered-store","number":205,"files":["e/\#(Self.nfc)"],"details":{}}]}"#.utf8)
        let line = FindingLine.render(
            IntegrityProblem(code: .init("merge.unregistered-store"), number: 205, files: ["e/\(Self.nfd)"], message: "m"))
        let same = FindingLine.render(IntegrityProblem(code: .init("merge.unregistered-store"), number: 205, files: ["e/\(Self.nfc)"], message: "m"))
        #expect(MergeCases.findingDifferences(expected: expected, stderr: Data((same + "\n").utf8)).isEmpty)
        #expect(!MergeCases.findingDifferences(expected: expected, stderr: Data((line + "\n").utf8)).isEmpty)
    }

    @Test("repair's fold moves the copy's NFD file into the ensemble and quarantines its NFC file, which the ensemble already has", ByteOrderTests.bothNames)
    func foldByBytes() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let folder = scratch.appendingPathComponent("case")
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/repair/fold-and-quarantine"), to: folder)
        for (copy, name) in [("E", Self.nfc), ("E 2", Self.nfc), ("E 2", Self.nfd)] {
            try Self.event(store: name).write(to: folder.appendingPathComponent("cloud/\(copy)/events/50_\(name)_0.cdeevent"))
        }
        let run = try Run(arguments: ["repair", "cloud/E", "--json"], in: folder)
        let actions = try JSONParser.parse(run.stdout)[JSONPointer(["plan", "actions"])]?.arrayValue ?? []
        let fold = try #require(actions.first { $0[JSONPointer(["code"])] == .string("repair.fold-duplicate") }, "\(run.stdout)")
        let ours = { (values: [JSONValue]) in Self.bytes(values).filter { String(decoding: $0, as: UTF8.self).contains("/50_caf") } }
        let moved = ours((fold[JSONPointer(["moves"])]?.arrayValue ?? []).compactMap { $0[JSONPointer(["from"])] })
        let quarantined = ours(fold[JSONPointer(["quarantine"])]?.arrayValue ?? [])
        let copy = folder.appendingPathComponent("cloud/E 2/events").path
        #expect(moved == [Array("\(copy)/50_\(Self.nfd)_0.cdeevent".utf8)], "\(run.stdout)")
        #expect(quarantined == [Array("\(copy)/50_\(Self.nfc)_0.cdeevent".utf8)], "\(run.stdout)")
    }

    @Test("convert copies two registrations and two data files named in NFC and NFD, each with its own bytes", ByteOrderTests.bothNames)
    func convertTwoNames() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Self.registerBoth(in: ensemble, copying: ensemble.appendingPathComponent("stores/A1B2C3D4-STORE-ALPHA"), of: "A1B2C3D4-STORE-ALPHA")
        for (name, byte) in [(Self.nfc, "a"), (Self.nfd, "b")] {
            try Data(String(repeating: byte, count: 10).utf8).write(to: ensemble.appendingPathComponent("data/\(name)"))
        }
        let out = scratch.appendingPathComponent("out")
        let run = try Run("convert", "-q", scratch.appendingPathComponent("cloud").path, out.path)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for (name, byte) in [(Self.nfc, "a"), (Self.nfd, "b")] {
            #expect((try? Data(contentsOf: out.appendingPathComponent("MainStore/data/\(name)"))) == Data(String(repeating: byte, count: 10).utf8))
            #expect((try? String(contentsOf: out.appendingPathComponent("MainStore/stores/\(name)"), encoding: .utf8))?.contains(name) == true)
        }
    }

    @Test("the timeline draws stores named in NFC and NFD in two lanes and keeps each mark's store and revision")
    func timelineLanes() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        for (count, store, revision) in [(50, Self.nfc, 0), (51, Self.nfd, 5), (52, Self.nfc, 1)] {
            let text = String(decoding: Self.event(store: store, globalCount: "\(count)"), as: UTF8.self)
                .replacingOccurrences(of: #"{"\#(store)":0}"#, with: #"{"\#(store)":\#(revision)}"#)
            try Data(text.utf8).write(to: ensemble.appendingPathComponent("events/\(count)_\(store)_\(revision).cdeevent"))
        }
        let run = LogTool.runCapturing(arguments: ["timeline", scratch.appendingPathComponent("cloud").path])
        let opening = #"<script type="application/json" class="timeline-data">"#
        let json = try #require(run.stdout.components(separatedBy: opening).dropFirst().first?.components(separatedBy: "</script>").first)
        let data = try JSONParser.parse(Array(json.utf8))
        let lanes = Self.bytes(data[JSONPointer(["lanes"])]?.arrayValue ?? []).filter { $0.starts(with: Array("caf".utf8)) }
        #expect(lanes == [Array(Self.nfd.utf8), Array(Self.nfc.utf8)], "\(json.prefix(2000))")
        let ours = try TimelineColumns.marks(data).filter { $0.globalCount >= 50 }.map { (Array($0.store.utf8), $0.revision) }
        #expect(ours.map(\.0) == [Array(Self.nfc.utf8), Array(Self.nfd.utf8), Array(Self.nfc.utf8)] && ours.map(\.1) == [0, 5, 1], "\(ours)")
    }

    @Test("rebase copies the data file an event names in NFC, not the unnamed one spelt in NFD beside it", ByteOrderTests.bothNames)
    func rebaseDataFiles() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Self.writeEventNaming(dataFile: Self.nfc, in: ensemble)
        for name in [Self.nfc, Self.nfd] { try Data(String(repeating: name, count: 30).utf8).write(to: ensemble.appendingPathComponent("data/\(name)")) }
        let out = scratch.appendingPathComponent("out")
        let run = try Run("rebase", "-q", scratch.appendingPathComponent("cloud").path, "--out", out.path)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let copied = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("MainStore/data").path).filter { $0.hasPrefix("caf") }
        #expect(copied.map { Array($0.utf8) } == [Array(Self.nfc.utf8)], "\(copied)")
    }

    @Test("JSON pointers whose tokens differ only in normalisation are two pointers, as their order says")
    func pointers() {
        let nfc = JSONPointer(["a", Self.nfc]), nfd = JSONPointer(["a", Self.nfd])
        #expect(nfc != nfd && Set([nfc, nfd]).count == 2 && nfd < nfc)
        #expect(JSONPointer(["a", Self.nfc]) == nfc)
    }

    @Test("verify: an unnamed data file in NFD beside a named one in NFC is an orphan; two files' unknown keys are two findings", ByteOrderTests.bothNames)
    func verifyOrphanAndUnknownKeys() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Self.writeEventNaming(dataFile: Self.nfc, in: ensemble)
        for name in [Self.nfc, Self.nfd] {
            try Data(name.utf8).write(to: ensemble.appendingPathComponent("data/\(name)"))
            try Self.event(store: name, globalCount: "60", extra: #""x-\#(name)":1"#).write(to: ensemble.appendingPathComponent("events/60_\(name)_0.cdeevent"))
        }
        let run = try Run("verify", "--json", ensemble.path)
        let diagnostics = try JSONParser.parse(run.stdout)[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
        func files(_ code: String) -> [[UInt8]] {
            Self.bytes(diagnostics.filter { $0[JSONPointer(["code"])] == .string(code) }.compactMap { $0[JSONPointer(["files", "0"])] })
                .filter { String(decoding: $0, as: UTF8.self).contains("caf") }
        }
        #expect(files("verify.orphan-data-file") == [Array("data/\(Self.nfd)".utf8)], "\(run.stdout)")
        #expect(files("verify.unknown-keys") == [Array("events/60_\(Self.nfd)_0.cdeevent".utf8), Array("events/60_\(Self.nfc)_0.cdeevent".utf8)])
    }

    @Test("the timeline names a mark's file when its name spells the store in NFD and its content in NFC")
    func timelineFileName() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Self.event(store: Self.nfc).write(to: ensemble.appendingPathComponent("events/50_\(Self.nfd)_0.cdeevent"))
        let run = LogTool.runCapturing(arguments: ["timeline", scratch.appendingPathComponent("cloud").path])
        let opening = #"<script type="application/json" class="timeline-data">"#
        let json = try #require(run.stdout.components(separatedBy: opening).dropFirst().first?.components(separatedBy: "</script>").first)
        let marks = try TimelineColumns.marks(try JSONParser.parse(Array(json.utf8))).filter { $0.globalCount == 50 }
        #expect(marks.map { Array($0.file.utf8) } == [Array("events/50_\(Self.nfd)_0.cdeevent".utf8)], "\(marks)")
    }

    @Test("merge --sqlite writes a table for each of two entities named in NFC and NFD")
    func sqliteTables() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let entities = ["Caf\u{E9}", "Cafe\u{301}"]
        for (offset, entity) in entities.enumerated() {
            let change = #"{"\#(entity)":[{"globalIdentifier":"o-\#(offset)","properties":[{"propertyName":"name","type":0,"value":"x"}],"type":100}]}"#
            let text = """
                {"changesByEntity":\(change),"globalCount":\(50 + offset),"revisionsByStoreIdentifier":{"A1B2C3D4-STORE-ALPHA":\(12 + offset)},\
                "storeIdentifier":"A1B2C3D4-STORE-ALPHA","timestamp":"1.0","type":200,"uniqueIdentifier":"UQ\(offset)"}
                """
            try Data(text.utf8).write(to: ensemble.appendingPathComponent("events/\(50 + offset)_A1B2C3D4-STORE-ALPHA_\(12 + offset).cdeevent"))
        }
        let database = scratch.appendingPathComponent("state.sqlite")
        let run = try Run("merge", "-q", "--sqlite", database.path, ensemble.path)
        #expect(run.status == 0, "\(run.stderr)")
        var handle: OpaquePointer?
        try #require(sqlite3_open_v2(database.path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        try #require(sqlite3_prepare_v2(handle, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", -1, &statement, nil) == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        var tables: [[UInt8]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            if let text = sqlite3_column_text(statement, 0) { tables.append(Array(String(cString: text).utf8)) }
        }
        #expect(tables.filter { $0.starts(with: Array("Caf".utf8)) } == [Array(entities[1].utf8), Array(entities[0].utf8)])
    }

    @Test("history lists the NFD store's event as concurrent with the NFC store's, whose file name differs only so", ByteOrderTests.bothNames)
    func historyConcurrent() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        try Self.registerBoth(in: ensemble, copying: ensemble.appendingPathComponent("stores/A1B2C3D4-STORE-ALPHA"), of: "A1B2C3D4-STORE-ALPHA")
        for (store, value) in [(Self.nfc, "a"), (Self.nfd, "b")] {
            let change = #"{"Tag":[{"globalIdentifier":"tag-work","properties":[{"propertyName":"name","type":0,"value":"\#(value)"}],"type":200}]}"#
            try Self.event(store: store, changes: change).write(to: ensemble.appendingPathComponent("events/50_\(store)_0.cdeevent"))
        }
        let run = try Run("history", "-q", "--entity", "Tag", "--id", "tag-work", "--json", ensemble.path)
        let changes = (try JSONParser.parse(run.stdout)[JSONPointer(["changes"])]?.arrayValue ?? [])
            .filter { $0[JSONPointer(["file"])]?.stringValue?.contains("/50_caf") == true }
        #expect(changes.count == 2, "\(run.stdout)")
        for change in changes {
            let own = change[JSONPointer(["file"])]?.stringValue ?? ""
            let others = (change[JSONPointer(["concurrentWith"])]?.arrayValue ?? []).compactMap(\.stringValue).filter { $0.contains("/50_caf") }
            #expect(others.count == 1 && others.allSatisfy { !exactlyEqual($0, own) }, "\(own): \(others)")
        }
    }

    /// A model of `entities`: (name, [(attribute, type)]).
    static func modelXML(_ entities: [(String, [(String, String)])]) -> String {
        let body = entities.map { entity, attributes in
            let lines = attributes.map { #"<attribute name="\#($0.0)" optional="YES" attributeType="\#($0.1)"/>"# }
            return #"<entity name="\#(entity)" syncable="YES">"# + lines.joined() + "</entity>"
        }
        return #"<?xml version="1.0" encoding="UTF-8"?><model type="com.apple.IDECoreDataModeler.DataModel">"# + body.joined() + "</model>"
    }

    /// The example folder's stores without its events and baselines, and beside it the model
    /// `M.xcdatamodeld` of `entities` (``modelXML(_:)``): (scratch, ensemble folder, model).
    static func bareExample(model entities: [(String, [(String, String)])]) throws -> (scratch: URL, ensemble: URL, model: URL) {
        let (scratch, ensemble) = try example()
        let model = scratch.appendingPathComponent("M.xcdatamodeld")
        try FileManager.default.createDirectory(at: model.appendingPathComponent("M.xcdatamodel"), withIntermediateDirectories: true)
        try Data(modelXML(entities).utf8).write(to: model.appendingPathComponent("M.xcdatamodel/contents"))
        for folder in ["events", "baselines"] {
            for file in try FileManager.default.contentsOfDirectory(atPath: ensemble.appendingPathComponent(folder).path) {
                try FileManager.default.removeItem(at: ensemble.appendingPathComponent("\(folder)/\(file)"))
            }
        }
        return (scratch, ensemble, model)
    }

    /// Whether the UTF-8 bytes of `text` hold those of `part` (`contains` compares characters).
    static func holdsBytes(_ text: String, _ part: String) -> Bool { Array(text.utf8).firstRange(of: Array(part.utf8)) != nil }

    @Test("a model's entities and properties whose names differ only in normalisation are two, each found by its own bytes")
    func modelNames() throws {
        let xml = Self.modelXML([("T\u{E2}che", [(Self.nfc, "String"), (Self.nfd, "Integer 32")]), ("Ta\u{302}che", [("note", "String")])])
        let model = try ModelXMLReader.parse(Data(xml.utf8), displayPath: "contents", versionName: nil)
        #expect(model.entityNames.map { Array($0.utf8) } == [Array("Ta\u{302}che".utf8), Array("T\u{E2}che".utf8)])
        #expect(model.shape(of: Self.nfc, in: "T\u{E2}che") == .attribute(.string))
        #expect(model.shape(of: Self.nfd, in: "T\u{E2}che") == .attribute(.integer32))
        #expect(model.shape(of: "note", in: "T\u{E2}che") == nil)
        #expect(model.shape(of: "note", in: "Ta\u{302}che") == .attribute(.string))
        #expect(model.shape(of: Self.nfc, in: "Ta\u{302}che") == nil)
        #expect(!model.entity("T\u{E2}che", isKindOf: "Ta\u{302}che"))
    }

    @Test("merge refuses an event naming the NFD spelling of an entity or property the model has only in NFC, and says so")
    func modelLookAlikes() throws {
        let (scratch, ensemble, model) = try Self.bareExample(model: [("T\u{E2}che", [(Self.nfc, "String")])])
        defer { try? FileManager.default.removeItem(at: scratch) }
        func merge(entity: String, property: String) throws -> (code: JSONValue?, message: String) {
            let change = #"{"\#(entity)":[{"globalIdentifier":"t","properties":[{"propertyName":"\#(property)","type":0,"value":"x"}],"type":100}]}"#
            try Self.event(store: "A1B2C3D4-STORE-ALPHA", globalCount: "0", changes: change)
                .write(to: ensemble.appendingPathComponent("events/0_A1B2C3D4-STORE-ALPHA_0.cdeevent"))
            let run = try Run("merge", "--json", "--model", model.path, ensemble.path)
            let error = try JSONParser.parse(run.stdout)[JSONPointer(["errors", "0"])]
            return (error?[JSONPointer(["code"])], error?[JSONPointer(["message"])]?.stringValue ?? run.stdout + run.stderr)
        }
        let note = "\", which differs only in Unicode normalisation"
        #expect(try merge(entity: "T\u{E2}che", property: Self.nfc).code == nil)
        let entity = try merge(entity: "Ta\u{302}che", property: Self.nfc)
        #expect(entity.code == .string("model.unknown-entity"))
        #expect(Self.holdsBytes(entity.message, "has \"T\u{E2}che" + note), "\(entity.message)")
        let property = try merge(entity: "T\u{E2}che", property: Self.nfd)
        #expect(property.code == .string("model.unknown-property"))
        #expect(Self.holdsBytes(property.message, "has \"\(Self.nfc)" + note), "\(property.message)")
        #expect(try !merge(entity: "T\u{E2}che", property: "other").message.contains(note))
    }

    @Test("history says which event set each of two properties whose names differ only in normalisation")
    func historySetBy() throws {
        let (scratch, ensemble, model) = try Self.bareExample(model: [("T", [(Self.nfc, "String"), (Self.nfd, "String")])])
        defer { try? FileManager.default.removeItem(at: scratch) }
        for (count, name, type) in [(0, Self.nfc, 100), (1, Self.nfd, 200)] {
            let change = #"{"T":[{"globalIdentifier":"t","properties":[{"propertyName":"\#(name)","type":0,"value":"v"}],"type":\#(type)}]}"#
            let text = """
                {"changesByEntity":\(change),"globalCount":\(count),"revisionsByStoreIdentifier":{"A1B2C3D4-STORE-ALPHA":\(count)},\
                "storeIdentifier":"A1B2C3D4-STORE-ALPHA","timestamp":"1.0","type":200,"uniqueIdentifier":"U\(count)"}
                """
            try Data(text.utf8).write(to: ensemble.appendingPathComponent("events/\(count)_A1B2C3D4-STORE-ALPHA_\(count).cdeevent"))
        }
        let run = try Run("history", "-q", "--model", model.path, "--entity", "T", "--id", "t", "--json", ensemble.path)
        let final = try JSONParser.parse(run.stdout)
        func setBy(_ name: String) -> String? { final[JSONPointer(["final", "properties", name, "setBy"])]?.stringValue }
        #expect(setBy(Self.nfc)?.hasSuffix("/0_A1B2C3D4-STORE-ALPHA_0.cdeevent") == true, "\(run.stdout)")
        #expect(setBy(Self.nfd)?.hasSuffix("/1_A1B2C3D4-STORE-ALPHA_1.cdeevent") == true, "\(run.stdout)")
    }

    @Test("the cure writes the marker of the NFD entity when only the NFC entity has live objects, and both spellings of a property")
    func cureMarkersByBytes() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let folder = scratch.appendingPathComponent("case")
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/repair-cure/lost-one"), to: folder)
        let (nfcEntity, nfdEntity) = ("T\u{E2}che", "Ta\u{302}che")
        let contents = folder.appendingPathComponent("Model.xcdatamodeld/Model.xcdatamodel/contents")
        // The NFC entity also has attributes named `café` in NFC and in NFD.
        let twins = [(nfcEntity, ["title", Self.nfc, Self.nfd]), (nfdEntity, ["title"])].map { entity, attributes in
            #"<entity name="\#(entity)" syncable="YES">"#
                + attributes.map { #"<attribute name="\#($0)" optional="YES" attributeType="String"/>"# }.joined() + "</entity>"
        }
        try Data(try String(contentsOf: contents, encoding: .utf8).replacingOccurrences(of: "</model>", with: twins.joined() + "</model>").utf8)
            .write(to: contents)
        // The first event also inserts an object of the NFC entity.
        let first = folder.appendingPathComponent("cloud/E/events/1_STORE-AAAA_0.cdeevent")
        let insert = #""\#(nfcEntity)":[{"globalIdentifier":"t1","properties":[{"propertyName":"title","type":0,"value":"x"}],"type":100}],"#
        let text = try String(contentsOf: first, encoding: .utf8)
        try Data(text.replacingOccurrences(of: #"{"changesByEntity":{"#, with: #"{"changesByEntity":{"# + insert).utf8).write(to: first)
        let quarantine = scratch.appendingPathComponent("quarantine")
        let run = try Run(
            arguments: ["repair", "cloud/E", "--cure-lost", "--model", "Model.xcdatamodeld", "--apply", "--quarantine", quarantine.path, "--json"], in: folder)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let baselines = folder.appendingPathComponent("cloud/E/baselines")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: baselines.path).first)
        let changes = try JSONParser.parse(Array(try Data(contentsOf: baselines.appendingPathComponent(name))))[JSONPointer(["changesByEntity"])]
        func identifiers(_ entity: String) -> [String] {
            (changes?[JSONPointer([entity])]?.arrayValue ?? []).compactMap { $0[JSONPointer(["globalIdentifier"])]?.stringValue }
        }
        #expect(identifiers(nfcEntity) == ["t1"])
        // Every property of the object, each spelling once: the two `café` unset, so null.
        let properties = changes?[JSONPointer([nfcEntity, "0", "properties"])]?.arrayValue ?? []
        #expect(Self.bytes(properties.compactMap { $0[JSONPointer(["propertyName"])] }) == [Self.nfd, Self.nfc, "title"].map { Array($0.utf8) })
        #expect(identifiers(nfdEntity).map { Array($0.utf8) } == [Array(("CURE-NONE-" + nfdEntity).utf8)])
    }
}
