import Foundation
import Testing
import JSONDocument

/// Issue 33, finding 8: an invalid registration is copied by convert (Spec/convert.md 3.2), a
/// password file has a size limit (Spec/wrappers.md 5.4), and a file given as a symbolic link is
/// refused in words (Spec/cloud-layout.md 7).
@Suite("Inputs: invalid registrations, password files, links")
struct InputEdgeTests {
    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("input-edges-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// `root/cloud/E` with a valid registration of A, an invalid one of B (it registers C) and
    /// one event of A.
    static func folder(in root: URL) throws -> URL {
        let ensemble = root.appendingPathComponent("cloud/E")
        for sub in ["stores", "events"] { try FileManager.default.createDirectory(at: ensemble.appendingPathComponent(sub), withIntermediateDirectories: true) }
        func registration(_ store: String) -> String {
            #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>leechDate</key><date>2024-03-01T09:00:00Z</date>"#
                + "<key>storeIdentifier</key><string>\(store)</string></dict></plist>"
        }
        try Data(registration("A").utf8).write(to: ensemble.appendingPathComponent("stores/A"))
        try Data(registration("C").utf8).write(to: ensemble.appendingPathComponent("stores/B"))
        let event =
            #"{"changesByEntity":{"Item":[{"globalIdentifier":"x","type":100}]},"globalCount":0,"revisionsByStoreIdentifier":{"A":0},"#
            + #""storeIdentifier":"A","timestamp":"0","type":200,"uniqueIdentifier":"A-0"}"#
        try Data(event.utf8).write(to: ensemble.appendingPathComponent("events/0_A_0.cdeevent"))
        return root.appendingPathComponent("cloud")
    }

    @Test("convert copies an invalid registration byte for byte and names it in notes; exit 0")
    func convertCopiesInvalidRegistration() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let cloud = try Self.folder(in: root)
        let destination = root.appendingPathComponent("out")
        let run = try Run(arguments: ["convert", "--json", cloud.path, destination.path], in: root)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let copied = try Data(contentsOf: destination.appendingPathComponent("E/stores/B"))
        #expect(copied == (try Data(contentsOf: cloud.appendingPathComponent("E/stores/B"))))
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        let notes = try #require(document[JSONPointer(["notes"])]?.arrayValue).compactMap(\.stringValue)
        #expect(notes.contains { $0.contains("E/stores/B") && $0.contains("store.invalid-registration") }, "\(notes)")
        #expect(document[JSONPointer(["errors"])]?.arrayValue?.isEmpty == true)
    }

    @Test("a password file over 65,536 bytes is a usage error saying so; one of exactly 65,536 is read")
    func passwordFileLimit() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let cloud = try Self.folder(in: root)
        let large = root.appendingPathComponent("large.txt")
        try Data(repeating: UInt8(ascii: "p"), count: 65_537).write(to: large)
        let refused = try Run(arguments: ["verify", "--password-file", large.path, cloud.path], in: root)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("larger than 65536 bytes"), "\(refused.stderr)")
        let limit = root.appendingPathComponent("limit.txt")
        try Data(repeating: UInt8(ascii: "p"), count: 65_536).write(to: limit)
        let read = try Run(arguments: ["inspect", "--password-file", limit.path, cloud.appendingPathComponent("E/events/0_A_0.cdeevent").path], in: root)
        #expect(read.status == 0, "\(read.stderr)")
    }

    @Test("a store registration or event given as a symbolic link is refused naming the path and saying links are not followed")
    func linkGivenDirectly() throws {
        let root = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let cloud = try Self.folder(in: root)
        for target in ["E/stores/A", "E/events/0_A_0.cdeevent"] {
            let link = root.appendingPathComponent("link-\(URL(fileURLWithPath: target).lastPathComponent)")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: cloud.appendingPathComponent(target))
            let run = try Run(arguments: ["inspect", link.path], in: root)
            #expect(run.status == 1)
            #expect(run.stdout.contains("\(link.path) is a symbolic link, and links are never followed"), "\(run.stdout)")
            #expect(run.stdout.contains("file.unreadable"))
        }
    }
}
