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
