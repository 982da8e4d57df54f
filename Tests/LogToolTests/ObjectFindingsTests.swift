import Foundation
import Testing
import JSONDocument
import LogToolCore

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
