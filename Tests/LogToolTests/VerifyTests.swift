import Foundation
import Testing
import JSONDocument
import SchemaValidation
import TestSupport

@Suite("verify fixtures")
struct VerifyFixtureTests {
    static let root = Run.packageRoot.appendingPathComponent("Fixtures/verify")
    static let cases: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
        .filter { FileManager.default.fileExists(atPath: root.appendingPathComponent($0).appendingPathComponent("case.json").path) }
        .sorted()

    @Test("there is a case per diagnostic code, and healthy folders")
    func present() {
        #expect(Self.cases.count >= 20)
        #expect(Self.cases.contains("healthy"))
    }

    @Test("each case reports exactly the expected diagnostics and growth, with a valid document", arguments: cases)
    func run(caseName: String) throws {
        let folder = Self.root.appendingPathComponent(caseName)
        let info = try JSONParser.parse(try Data(contentsOf: folder.appendingPathComponent("case.json")))
        let command = info[JSONPointer(["command"])]?.arrayValue?.compactMap(\.stringValue) ?? []
        let run = try Run(arguments: command, in: folder)
        #expect(Int64(run.status) == (info[JSONPointer(["exitCode"])]?.numberValue?.int64Value ?? 0), "\(caseName): \(run.stderr)")
        let actual = try JSONParser.parse(run.stdout)
        #expect(try BundledSchema.verify.validator().validate(actual).isEmpty, "\(caseName)")
        let expected = try JSONParser.parse(try Data(contentsOf: folder.appendingPathComponent("expected/verify.json")))
        if withoutProse(actual) != withoutProse(expected) {
            Issue.record("\(caseName): got \(JSONWriter(layout: .pretty).string(withoutProse(actual)))")
        }
    }
}

@Suite("verify: pending or missing")
struct DeliveryTests {
    /// The fixture case copied, with `extra` files (path inside the ensemble, bytes) added.
    func delivery(_ caseName: String, code: String, extra: [(String, String)]) throws -> JSONValue? {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cloud = scratch.appendingPathComponent("cloud")
        try FileManager.default.copyItem(at: VerifyFixtureTests.root.appendingPathComponent("\(caseName)/cloud"), to: cloud)
        for (path, text) in extra {
            let url = cloud.appendingPathComponent("E/\(path)")
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        let run = try Run(arguments: ["verify", "--json", cloud.path], in: scratch)
        let report = try JSONParser.parse(run.stdout)
        let diagnostics = report[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
        return diagnostics.first { $0[JSONPointer(["code"])] == .string(code) }?[JSONPointer(["details", "delivery"])]
    }

    @Test("an iCloud placeholder or a partial file of what is missing makes a finding pending")
    func pending() throws {
        #expect(
            try delivery("revision-gap", code: "verify.revision-gap", extra: [("events/.3_ALPHA-STORE_3.cdeevent.icloud", "placeholder")]) == .string("pending")
        )
        #expect(
            try delivery("missing-dependency", code: "verify.missing-dependency", extra: [("events/5_ALPHA-STORE_3.cdeevent.tmp", "half")])
                == .string("pending"))
        #expect(try delivery("missing-data-file", code: "verify.missing-data-file", extra: [("data/.PHOTO-9.icloud", "placeholder")]) == .string("pending"))
        #expect(
            try delivery("unregistered-store", code: "verify.unregistered-store", extra: [("stores/.BRAVO-STORE.icloud", "placeholder")]) == .string("pending"))
        // A placeholder of another revision or name changes nothing.
        #expect(try delivery("revision-gap", code: "verify.revision-gap", extra: [("events/.5_ALPHA-STORE_5.cdeevent.icloud", "x")]) == .string("missing"))
        #expect(try delivery("missing-data-file", code: "verify.missing-data-file", extra: [("data/.PHOTO-8.icloud", "x")]) == .string("missing"))
    }

    @Test("an incomplete multipart set is missing once its store has later complete events and no part is arriving")
    func incompleteMultipart() throws {
        let later = try String(
            contentsOf: VerifyFixtureTests.root.appendingPathComponent("incomplete-multipart/cloud/E/events/1_ALPHA-STORE_1.cdeevent"), encoding: .utf8
        )
        .replacingOccurrences(of: #""globalCount":1"#, with: #""globalCount":3"#)
        .replacingOccurrences(of: #""ALPHA-STORE":1"#, with: #""ALPHA-STORE":3"#)
        #expect(later.contains(#""ALPHA-STORE":3"#))
        #expect(
            try delivery("incomplete-multipart", code: "verify.incomplete-multipart", extra: [("events/3_ALPHA-STORE_3.cdeevent", later)]) == .string("missing")
        )
        #expect(
            try delivery(
                "incomplete-multipart", code: "verify.incomplete-multipart",
                extra: [("events/3_ALPHA-STORE_3.cdeevent", later), ("events/.2_ALPHA-STORE_2_2of3.cdeevent.icloud", "x")]) == .string("pending"))
    }

    /// `delivery` of `code` in `verify --json` of the ensemble folder of a device-mode case.
    func deviceCaseDelivery(_ caseName: String, code: String) throws -> JSONValue? {
        let run = try Run(arguments: ["verify", "--json", "cloud/E"], in: MergeFixtureTests.root.appendingPathComponent(caseName))
        let diagnostics = try JSONParser.parse(run.stdout)[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
        return diagnostics.first { $0[JSONPointer(["code"])] == .string(code) }?[JSONPointer(["details", "delivery"])]
    }

    @Test("verify decides delivery as device mode does: copies' placeholders arrive, a set with later complete events is missing, type 0 is not complete")
    func deliveryAsDevice() throws {
        // Spec/diagnostics.md 2.4 (X1, X2, G3 of issue 35): fails when a rule differs between the two paths.
        #expect(try deviceCaseDelivery("device-delivery-duplicate-folder", code: "verify.revision-gap") == .string("pending"))
        #expect(try deviceCaseDelivery("device-delivery-duplicate-folder", code: "verify.missing-data-file") == .string("pending"))
        #expect(try deviceCaseDelivery("device-delivery-incomplete-set", code: "verify.revision-gap") == .string("missing"))
        #expect(try deviceCaseDelivery("device-delivery-type-0-not-complete", code: "verify.missing-dependency") == .string("pending"))
    }
}

@Suite("history")
struct HistoryTests {
    @Test("every change to one object in replay order, what applied, and who set each final value")
    func history() throws {
        let run = try Run("history", "--json", "--entity", "Item", "--id", "i1", "Fixtures/merge/concurrent-baselines/cloud")
        #expect(run.status == 0, "\(run.stderr)")
        let document = try JSONParser.parse(run.stdout)
        #expect(try BundledSchema.history.validator().validate(document).isEmpty)
        let changes = document[JSONPointer(["changes"])]?.arrayValue ?? []
        #expect(changes.count == 3)
        #expect(changes.first?[JSONPointer(["baseline"])] == .bool(true))
        #expect(document[JSONPointer(["final", "properties", "note", "value"])] == .string("later"))
        #expect(document[JSONPointer(["final", "properties", "count", "setBy"])]?.stringValue?.contains("baselines/") == true)
    }
}

/// The report bound of Spec/README.md 6.2 for the integrity findings of one file: the first 100
/// of one code, then one `verify.more-findings` counting the rest, in verify, repair and timeline.
@Suite("verify: findings of one code for one file are bounded")
struct FindingsPerFileTests {
    static let bounded = Run.packageRoot.appendingPathComponent("Fixtures/merge/missing-dependency-201-bounded/cloud")

    func diagnostics(_ folder: URL) throws -> [JSONValue] {
        let run = try Run(["verify", "--json", folder.path])
        #expect(run.status == 1, "\(run.stderr)")
        let report = try JSONParser.parse(run.stdout)
        #expect(try BundledSchema.verify.validator().validate(report).isEmpty)
        return report[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
    }

    @Test("150 missing dependencies of one event: 100 findings in store order, then one counting 50")
    func dependencies() throws {
        let found = try diagnostics(Self.bounded)
        let stores = found.filter { $0[JSONPointer(["code"])] == .string("verify.missing-dependency") }
            .compactMap { $0[JSONPointer(["details", "store"])]?.stringValue }
        #expect(stores == (0..<100).map { String(format: "S%03d", $0) })
        let more = found.filter { $0[JSONPointer(["code"])] == .string("verify.more-findings") }
        #expect(more.count == 1 && found.count == 101)
        #expect(
            more.first?[JSONPointer(["details"])] == .object(JSONObject([("code", .string("verify.missing-dependency")), ("count", JSONValue(Int64(50)))])))
        #expect(more.first?[JSONPointer(["number"])] == JSONValue(Int64(201)))
    }

    @Test("120 missing data files of one event: 100 findings by name, then one counting 20; repair and timeline take the bound")
    func dataFiles() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let ensemble = scratch.appendingPathComponent("cloud/E")
        try FileManager.default.createDirectory(at: ensemble.appendingPathComponent("events"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: ensemble.appendingPathComponent("data"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.bounded.appendingPathComponent("E/stores"), to: ensemble.appendingPathComponent("stores"))
        let names = (0..<120).map { String(format: "F%03d", 119 - $0) }
        let event =
            #"{"changesByEntity":{"Item":[{"dataFiles":["#
            + names.map { "\"\($0)\"" }.joined(separator: ",")
            + #"],"globalIdentifier":"i1","properties":[{"propertyName":"title","type":0,"value":"a0"}],"type":100}]},"globalCount":0,"revisionsByStoreIdentifier":{"A":0},"storeIdentifier":"A","timestamp":"100.0","type":200,"uniqueIdentifier":"A-0-0"}"#
        try Data(event.utf8).write(to: ensemble.appendingPathComponent("events/0_A_0.cdeevent"))
        let found = try diagnostics(scratch.appendingPathComponent("cloud"))
        let missing = found.filter { $0[JSONPointer(["code"])] == .string("verify.missing-data-file") }
            .compactMap { $0[JSONPointer(["details", "dataFile"])]?.stringValue }
        #expect(missing == (0..<100).map { String(format: "F%03d", $0) })
        let more = found.filter { $0[JSONPointer(["code"])] == .string("verify.more-findings") }
        #expect(more.first?[JSONPointer(["details", "count"])] == JSONValue(Int64(20)) && more.first?[JSONPointer(["number"])] == JSONValue(Int64(210)))

        // Repair answers the 100 findings and leaves all 101 errors; the count adds no action.
        let repair = try Run(["repair", "--json", scratch.appendingPathComponent("cloud").path])
        let plan = try JSONParser.parse(repair.stdout)
        let actions = plan[JSONPointer(["plan", "actions"])]?.arrayValue ?? plan[JSONPointer(["actions"])]?.arrayValue ?? []
        #expect(actions.count == 100, "\(repair.stderr)")
        let timeline = try Run(["timeline", scratch.appendingPathComponent("cloud").path, "-o", scratch.appendingPathComponent("page.html").path])
        #expect(timeline.status == 0, "\(timeline.stderr)")
        let page = try String(contentsOf: scratch.appendingPathComponent("page.html"), encoding: .utf8)
        #expect(page.contains("verify.more-findings"))
    }
}
