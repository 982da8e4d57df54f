import Crypto
import EnsembleModel
import EventCodecs
import Foundation
import JSONDocument
import Testing

/// `generate` promises the same bytes for the same options (its help says so): these pin the
/// folders it wrote before its batch writer (issue 42 item 5) and check the v2 JSON it spells
/// out itself against the codecs.
@Suite("generate bytes")
struct GenerateBytesTests {
    /// The SHA-256 of a folder's listing as `sha256sum` writes it, with the summary line that
    /// `generate` printed. Made with the generator before its rewrite (commit 7338f24, whose
    /// writer built each event and encoded it with the codecs' encoders, one file after the other):
    ///
    ///     logtool generate DIR ARGS --no-progress
    ///     (cd DIR && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum
    ///
    /// Small folders, so that the debug build runs them in seconds; larger ones were compared by
    /// hand (Benchmarks/README.md, `generate`).
    static let folders: [(arguments: [String], listing: String, summary: String)] = [
        (
            ["--stores", "3", "--objects", "50", "--changes", "2000", "--seed", "42"],
            "0266909ddc929d027576c36741f0daec6e196fd586518cd89b88aaef667e4bcd",
            "Generated 73 events with 2000 object changes (151 inserts, 1746 updates, 103 deletes) and 0 data files, 464893 bytes"
        ),
        (
            ["--stores", "4", "--objects", "60", "--changes", "3000", "--seed", "9", "--blob-bytes", "20000"],
            "0e1b0efd9f0e8d0041fda6554c52741cd3083fd95f3dac7ee8cde5888aa03acc",
            "Generated 103 events with 3000 object changes (214 inserts, 2632 updates, 154 deletes) and 203 data files, 4760239 bytes"
        ),
        (
            ["--stores", "4", "--objects", "60", "--changes", "3000", "--seed", "9", "--blob-bytes", "20000", "--encoding", "binary"],
            "b2814f322bf74814bd802be52cc54c58f9411cb5af59b385eaa606840036263a",
            "Generated 103 events with 3000 object changes (214 inserts, 2632 updates, 154 deletes) and 203 data files, 4231053 bytes"
        ),
        (
            ["--stores", "2", "--objects", "40", "--changes", "2000", "--seed", "11", "--blob-bytes", "777"],
            "db9d06a313d75b81e783195eb6cd2ec7867f6af1e3974156d8f72cfc3530e49a",
            "Generated 80 events with 2000 object changes (123 inserts, 1792 updates, 85 deletes) and 0 data files, 493058 bytes"
        ),
        (
            ["--stores", "3", "--objects", "50", "--changes", "2000", "--seed", "5", "--format", "v1", "--blob-bytes", "3000"],
            "3ce0ed96a1b2f7fadf57837fa742217c5fac5f9a808261f9fac610596f89ee9c",
            "Generated 67 events with 2000 object changes (143 inserts, 1761 updates, 96 deletes) and 0 data files, 479728 bytes"
        ),
        (
            ["--stores", "5", "--objects", "200", "--changes", "5000", "--seed", "13", "--concurrency", "0"],
            "380d052b52799c55f67658ca9252624ed5a1813abc399d4cf614265e5e0364be",
            "Generated 118 events with 5000 object changes (405 inserts, 4376 updates, 219 deletes) and 0 data files, 1141263 bytes"
        ),
        (
            ["--stores", "2", "--objects", "30", "--changes", "500", "--seed", "17", "--changes-per-event", "1"],
            "ec37cfc580eeda092e5ba50b80754400e2c91cdbf6ec3092a289d2f7b3250748",
            "Generated 500 events with 500 object changes (58 inserts, 413 updates, 29 deletes) and 0 data files, 313437 bytes"
        ),
        (
            ["--stores", "2", "--objects", "5", "--changes", "0"],
            "7489da6aaeca26e2245351c619f625ae190aa5a7f6604e9ad733596d06b8bc58",
            "Generated 0 events with 0 object changes (0 inserts, 0 updates, 0 deletes) and 0 data files, 0 bytes"
        ),
    ]

    /// What `(cd DIR && find . -type f | LC_ALL=C sort | xargs sha256sum)` prints.
    static func listing(_ folder: URL) throws -> String {
        let root = folder.standardizedFileURL.path
        var paths: [String] = []
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        while let item = enumerator?.nextObject() as? URL {
            guard (try? item.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            paths.append("." + String(item.standardizedFileURL.path.dropFirst(root.count)))
        }
        paths.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var text = ""
        for path in paths {
            let digest = SHA256.hash(data: try Data(contentsOf: folder.appendingPathComponent(path)))
            text += digest.map { String(format: "%02x", $0) }.joined() + "  " + path + "\n"
        }
        return text
    }

    @Test("each folder has the bytes the generator wrote before its batch writer", arguments: 0..<folders.count)
    func sameBytes(case index: Int) throws {
        let (arguments, listing, summary) = Self.folders[index]
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("generate-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let out = scratch.appendingPathComponent("g")
        let run = try Run(["generate", out.path, "--no-progress"] + arguments)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix(summary + ", in "), "\(run.stdout)")
        let digest = SHA256.hash(data: Data(try Self.listing(out).utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(digest == listing, "\(arguments)")
    }

    @Test("every v2 JSON event is canonical and says what the binary event of the same draws says")
    func jsonAgreesWithCodecs() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("generate-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        // Many stores (long revision sets), inline blobs and blobs in data files, every kind of change.
        let arguments = ["--stores", "40", "--objects", "120", "--changes", "1500", "--seed", "3", "--concurrency", "0.5", "--no-progress"]
        for (name, encoding) in [("json", "json"), ("binary", "binary")] {
            let run = try Run(["generate", scratch.appendingPathComponent(name).path, "--encoding", encoding, "--blob-bytes", "10001"] + arguments)
            #expect(run.status == 0, "\(run.stderr)")
        }
        let inline = try Run(["generate", scratch.appendingPathComponent("inline").path, "--blob-bytes", "300"] + arguments)
        #expect(inline.status == 0, "\(inline.stderr)")
        let events = "cloud/Generated/events"
        let names = try FileManager.default.contentsOfDirectory(atPath: scratch.appendingPathComponent("json/\(events)").path).sorted()
        #expect(names.count > 20)
        for name in names {
            let json = Array(try Data(contentsOf: scratch.appendingPathComponent("json/\(events)/\(name)")))
            let event = try V2JSONDecoder().decodeEvent(try JSONParser.parse(json)).event
            #expect(try V2JSONEncoder().encode(event) == json, "\(name)")
            let binary = Array(try Data(contentsOf: scratch.appendingPathComponent("binary/\(events)/\(name)")))
            #expect(try V2BinaryDecoder().decode(binary) == event, "\(name)")
        }
        let inlineNames = try FileManager.default.contentsOfDirectory(atPath: scratch.appendingPathComponent("inline/\(events)").path)
        #expect(inlineNames.count > 20)
        for name in inlineNames {
            let json = Array(try Data(contentsOf: scratch.appendingPathComponent("inline/\(events)/\(name)")))
            let event = try V2JSONDecoder().decodeEvent(try JSONParser.parse(json)).event
            #expect(try V2JSONEncoder().encode(event) == json, "\(name)")
        }
    }
}
