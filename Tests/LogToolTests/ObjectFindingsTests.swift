import Foundation
import Testing
import JSONDocument
import EnsembleModel
import LogToolCore
@testable import EnsemblesToolkit

/// Verify's objects step (Spec/diagnostics.md 4.19a-c) where the golden cases of Fixtures/verify
/// do not reach: which inserts count as concurrent, and which events are looked at.
@Suite("verify: objects inserted more than once")
struct ObjectFindingsTests {
    static let concurrent = Run.packageRoot.appendingPathComponent("Fixtures/verify/concurrent-insert/cloud")

    /// The codes verify reports for the concurrent-insert folder after `edit` changes a copy, each
    /// with its files.
    static func codes(after edit: (URL) throws -> Void) throws -> [String] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("objects-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let cloud = scratch.appendingPathComponent("cloud")
        try FileManager.default.copyItem(at: concurrent, to: cloud)
        try edit(cloud.appendingPathComponent("E/events"))
        let run = LogTool.runCapturing(arguments: ["verify", "--json", cloud.path])
        let document = try JSONParser.parse(run.stdout)
        return (document[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []).map { diagnostic in
            ([diagnostic[JSONPointer(["code"])]] + (diagnostic[JSONPointer(["files"])]?.arrayValue ?? [])).compactMap { $0?.stringValue }
                .joined(separator: " ")
        }
    }

    /// Hands `event` to `index` as a folder's reading does: its header, and its changes numbered.
    private static func add(_ event: Event, from file: String, to index: ObjectIndex) {
        var header = event
        header.objectChanges = []
        index.add(file: file, header: header, changes: NumberedEvent(event))
    }

    @Test("the object index records every event handed to it, and finds each object's inserts over several pieces")
    func indexInPieces() {
        // Stores A and B each insert the same 10,000 objects without knowing of each other:
        // one concurrent insert per object (4.19a), found in pieces of 4,096 objects.
        let index = ObjectIndex()
        for store in ["A", "B"] {
            let inserts = (0..<10_000).map { ObjectChange(entity: "Item", globalIdentifier: "item-\($0)", type: .insert) }
            Self.add(
                Event(uniqueIdentifier: store, type: .save, storeIdentifier: store, revision: 0, globalCount: 1, timestamp: 0, objectChanges: inserts),
                from: "1_\(store)_0.cdeevent", to: index)
        }
        let found = index.diagnostics(replayed: [ExactString("1_A_0.cdeevent"), ExactString("1_B_0.cdeevent")])
        #expect(found.count == 10_000)
        #expect(found.allSatisfy { $0.code == .verifyConcurrentInsert && $0.files == ["1_A_0.cdeevent", "1_B_0.cdeevent"] })
        #expect(Set(found.compactMap { $0.details["globalIdentifier"]?.stringValue }).count == 10_000)
    }

    @Test("findings made early for a folder expected to replay every event are used only when it does")
    func findingsMadeEarly() {
        // Stores A and B insert one object without knowing of each other: concurrent only
        // while both events are replayed.
        let index = ObjectIndex()
        for store in ["A", "B"] {
            Self.add(
                Event(
                    uniqueIdentifier: store, type: .save, storeIdentifier: store, revision: 0, globalCount: 1, timestamp: 0,
                    objectChanges: [ObjectChange(entity: "Item", globalIdentifier: "item", type: .insert)]),
                from: "1_\(store)_0.cdeevent", to: index)
        }
        index.finishRecording(allReplayedLikely: true)
        #expect(index.diagnostics(replayed: [ExactString("1_A_0.cdeevent")]).isEmpty)
        #expect(index.diagnostics(replayed: [ExactString("1_A_0.cdeevent"), ExactString("1_B_0.cdeevent")]).map(\.code) == [.verifyConcurrentInsert])
    }

    @Test("an insert by a store that knows the other store's insert is not concurrent")
    func knownInsertIsNotConcurrent() throws {
        #expect(try Self.codes { _ in } == ["verify.concurrent-insert events/0_ALPHA-STORE_0.cdeevent events/0_BRAVO-STORE_0.cdeevent"])
        let codes = try Self.codes { events in
            // BRAVO-STORE's event now names ALPHA-STORE at revision 0: it knows ALPHA-STORE's insert.
            let file = events.appendingPathComponent("0_BRAVO-STORE_0.cdeevent")
            let text = try String(contentsOf: file, encoding: .utf8)
            try text.replacingOccurrences(of: #"{"BRAVO-STORE":0}"#, with: #"{"ALPHA-STORE":0,"BRAVO-STORE":0}"#).write(
                to: file, atomically: true, encoding: .utf8)
        }
        #expect(codes == [])
    }

    @Test("an event the merge does not replay is not looked at")
    func onlyReplayedEvents() throws {
        // A second copy of ALPHA-STORE/0 under another global count: a duplicate delivery, one event.
        let codes = try Self.codes { events in
            try FileManager.default.copyItem(
                at: events.appendingPathComponent("0_ALPHA-STORE_0.cdeevent"), to: events.appendingPathComponent("5_ALPHA-STORE_0.cdeevent"))
        }
        #expect(codes.contains { $0.hasPrefix("verify.name-mismatch") })
        #expect(
            codes.filter { $0.hasPrefix("verify.concurrent-insert") } == [
                "verify.concurrent-insert events/0_ALPHA-STORE_0.cdeevent events/0_BRAVO-STORE_0.cdeevent"
            ])
    }
}
