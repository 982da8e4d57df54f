import Foundation
import Testing
import JSONDocument
import SchemaValidation
import EnsemblesToolkit

/// `logtool diff` (Spec/diff.md): the hand-derived cases of Fixtures/diff, exit statuses, and
/// the order of the walk over two states.
@Suite("Diff")
struct DiffTests {
    static let cases = ["changed", "views", "arrived", "identical"]

    /// `value` without the informative `message` of any finding (Fixtures/diff/README.md).
    static func withoutMessages(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array(let items): return .array(items.map(withoutMessages))
        case .object(let object):
            let isFinding = object["code"] != nil && object["number"] != nil
            return .object(JSONObject(object.filter { !(isFinding && $0.key == "message") }.map { ($0.key, withoutMessages($0.value)) }))
        default: return value
        }
    }

    struct Case {
        var folder: URL
        var command: [String]
        var exitCode: Int32

        init(_ name: String) throws {
            folder = Run.packageRoot.appendingPathComponent("Fixtures/diff/\(name)")
            let description = try JSONParser.parse(Array(try Data(contentsOf: folder.appendingPathComponent("case.json"))))
            command = description[JSONPointer(["command"])]?.arrayValue?.compactMap(\.stringValue) ?? []
            exitCode = Int32(description[JSONPointer(["exitCode"])]?.numberValue?.int64Value ?? -1)
        }

        func expected(_ file: String) throws -> Data { try Data(contentsOf: folder.appendingPathComponent("expected/\(file)")) }
    }

    @Test("--json: the hand-derived document, valid against diff.schema.json, and the case's exit status", arguments: cases)
    func json(name: String) throws {
        let golden = try Case(name)
        let run = try Run(arguments: golden.command, in: golden.folder)
        #expect(run.status == golden.exitCode, "\(run.stderr)")
        #expect(run.stderr == "")
        #expect(run.stdout.hasSuffix("}\n"))
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        #expect(try BundledSchema.diff.validator().validate(document).isEmpty)
        let expected = try JSONParser.parse(Array(try golden.expected("diff.json")))
        #expect(try BundledSchema.diff.validator().validate(expected).isEmpty)
        #expect(Self.withoutMessages(document) == Self.withoutMessages(expected))
    }

    @Test("text: the hand-derived lines, nothing at all when equal, the same exit status", arguments: cases)
    func text(name: String) throws {
        let golden = try Case(name)
        let run = try Run(arguments: golden.command.filter { $0 != "--json" }, in: golden.folder)
        #expect(run.status == golden.exitCode, "\(run.stderr)")
        #expect(run.stderr == "")
        // A finding line's message is informative: cut after its details.
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.hasPrefix("  "), !line.hasPrefix("  - "), !line.hasPrefix("  + "), let end = line.range(of: "]: ") else { return String(line) }
            return String(line[..<end.lowerBound]) + "]:"
        }
        #expect(lines.joined(separator: "\n") == String(decoding: try golden.expected("diff.txt"), as: UTF8.self))
    }

    @Test("exit 2 for usage errors and for a side that cannot be merged, never 1")
    func errors() throws {
        let changed = Run.packageRoot.appendingPathComponent("Fixtures/diff/changed")
        // One folder needs two views.
        #expect(try Run(arguments: ["diff", "a/E"], in: changed).status == 2)
        #expect(try Run(arguments: ["diff", "--as-store", "X", "a/E"], in: changed).status == 2)
        #expect(try Run(arguments: ["diff", "a/E", "no-such-folder"], in: changed).status == 2)
        // A strict merge that stops (a revision gap) stops the diff: 2, with its findings.
        let gap = try Run("diff", "Fixtures/verify/revision-gap/cloud/E", "Fixtures/diff/changed/a/E")
        #expect(gap.status == 2)
        #expect(gap.stdout == "")
        #expect(gap.stderr.contains("merge.revision-gap (200)"), "\(gap.stderr)")
        let json = try Run("diff", "--json", "Fixtures/verify/revision-gap/cloud/E", "Fixtures/diff/changed/a/E")
        #expect(json.status == 2)
        #expect(try JSONParser.parse(Array(json.stdout.utf8))[JSONPointer(["errors", "0", "code"])] == .string("merge.revision-gap"))
        // Seen as devices (no baseline: both integrate nothing), the folders compare: their
        // files differ, so 1.
        let device = try Run("diff", "--as-store", "ALPHA-STORE", "Fixtures/verify/revision-gap/cloud/E", "Fixtures/diff/changed/a/E")
        #expect(device.status == 1, "\(device.stderr)")
    }

    /// A state of one event of inserts, each (entity, id) with one property `p` = `value`.
    static func state(_ objects: [(entity: String, id: String, value: String)]) -> StoreState {
        state(objects.map { ($0.entity, $0.id, AttributeValue.string($0.value)) })
    }

    static func state(_ objects: [(entity: String, id: String, value: AttributeValue)]) -> StoreState {
        var state = StoreState(model: nil)
        let changes = objects.map {
            ObjectChange(entity: $0.entity, globalIdentifier: $0.id, type: .insert, propertyChanges: [PropertyChange(name: "p", value: .attribute($0.value))])
        }
        state.apply(Event(uniqueIdentifier: "U", type: .save, storeIdentifier: "S", revision: 0, globalCount: 0, timestamp: 0, objectChanges: changes))
        return state
    }

    static func summary(_ rows: [JSONValue]) -> [String] {
        rows.map { row in
            ["change", "entity", "id"].map { row[JSONPointer([$0])]?.stringValue ?? "?" }.joined(separator: " ")
        }
    }

    @Test("the walk goes by entity, then identifier, in UTF-8 byte order, and matches identifiers exactly")
    func order() throws {
        // é precomposed (C3 A9) and e + U+0301 (65 CC 81) are canonically equivalent, which Swift's
        // String == treats as equal: they are two objects. "Z" (5A) sorts before both.
        let a = Self.state([("Item", "\u{E9}", "1"), ("Note", "a", "1"), ("Alpha", "z", "1")])
        let b = Self.state([("Item", "e\u{301}", "1"), ("Item", "Z", "1"), ("Note", "a", "2"), ("Beta", "a", "1")])
        let rows = try Ensemble.stateDifferences(a, b)
        #expect(
            Self.summary(rows) == [
                "removed Alpha z", "added Beta a", "added Item Z", "added Item e\u{301}", "removed Item \u{E9}", "changed Note a",
            ])
        #expect(
            rows.last?[JSONPointer(["properties", "0"])]
                == JSONValue.object(JSONObject([("name", .string("p")), ("change", .string("changed")), ("a", .string("1")), ("b", .string("2"))])))
        #expect(try Ensemble.stateDifferences(a, a).isEmpty)
        #expect(Self.summary(try Ensemble.stateDifferences(nil, a)) == ["added Alpha z", "added Item \u{E9}", "added Note a"])
    }

    @Test("values compare by their canonical text: an Integer 1 and a Double 1.0 differ, and so do 0.0 and -0.0")
    func valueText() throws {
        let a = Self.state([("Item", "i", AttributeValue.integer(1)), ("Item", "z", .double(0.0))])
        let b = Self.state([("Item", "i", AttributeValue.double(1.0)), ("Item", "z", .double(-0.0))])
        let rows = try Ensemble.stateDifferences(a, b)
        #expect(Self.summary(rows) == ["changed Item i", "changed Item z"])
        #expect(rows.first?[JSONPointer(["properties", "0", "b"])].map { JSONWriter().string($0) } == "1.0")
        #expect(rows.last?[JSONPointer(["properties", "0", "b"])].map { JSONWriter().string($0) } == "-0.0")
        #expect(try Ensemble.stateDifferences(b, Self.state([("Item", "i", AttributeValue.double(1.0)), ("Item", "z", .double(-0.0))])).isEmpty)
    }

    @Test("a failed write to standard output is 2, not the 1 of different", arguments: [["diff", "a/E", "b/E"], ["diff", "--json", "a/E", "a/E"]])
    func fullDevice(arguments: [String]) throws {
        let run = try Run(
            arguments: arguments, in: Run.packageRoot.appendingPathComponent("Fixtures/diff/changed"),
            standardOutput: try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full")))
        #expect(run.status == 2, "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains("standard output"), "\(arguments): \(run.stderr)")
    }

    @Test("two devices whose outcomes differ are different even when files, events and states are not")
    func outcomes() throws {
        // Only stores/STORE-BB: STORE-AA deleeches, STORE-BB finds no baseline (Spec/merge.md 15.4).
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("diff-outcomes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("E/stores"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Run.packageRoot.appendingPathComponent("Fixtures/diff/views/cloud/E/stores/STORE-BB"), to: root.appendingPathComponent("E/stores/STORE-BB"))
        let run = try Run(arguments: ["diff", "--as-store", "STORE-AA", "--as-store", "STORE-BB", "E"], in: root)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stdout == "--- a: E as STORE-AA\n+++ b: E as STORE-BB\noutcome: a deleeches, b integrates-nothing\n")
        let json = try JSONParser.parse(
            Array(try Run(arguments: ["diff", "--json", "--as-store", "STORE-AA", "--as-store", "STORE-AA", "E"], in: root).stdout.utf8))
        #expect(json[JSONPointer(["equal"])] == .bool(true))
    }
}
