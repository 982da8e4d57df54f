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
