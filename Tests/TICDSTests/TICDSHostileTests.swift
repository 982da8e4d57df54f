import EnsemblesToolkit
import FileWrappers
import Foundation
import JSONDocument
import Testing

@testable import TICDS

/// Hostile input (Spec/ticds.md 2.2): every file of a real folder replaced in turn by bytes of
/// every kind the readers meet (empty, a cut copy, SQLite's header alone, a property list of the
/// wrong shape, an FZACryptor-sized random file, random bytes); inspect and verify of the folder
/// neither crash nor throw, write nothing, and name the damaged file.
@Suite("TICDS hostile input")
struct TICDSHostileTests {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func replacements(for original: [UInt8], random: inout Generator) -> [[UInt8]] {
        [
            [], Array(original.prefix(original.count / 2)), Array("SQLite format 3".utf8) + [0],
            Array(#"<?xml version="1.0"?><plist version="1.0"><array><string>x</string></array></plist>"#.utf8),
            (0..<112).map { _ in UInt8.random(in: 0...255, using: &random) },
            (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) },
        ]
    }

    @Test("each file replaced by damaged bytes: no crash, no throw, nothing written, the file named; the replay stops or fails with a code")
    func damagedFiles() throws {
        let (root, facts) = try TICDSFactsTests.prepare("encrypted")
        defer { try? FileManager.default.removeItem(at: root) }
        let app = root.appendingPathComponent("com.example.TICDSNotebook")
        let files = (FileManager.default.enumerator(atPath: app.path)?.allObjects as? [String] ?? []).filter {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: app.appendingPathComponent($0).path, isDirectory: &isFolder) && !isFolder.boolValue
        }.sorted()
        #expect(files.count > 10)
        var random = Generator(state: 39)
        let ensemble = TICDSFactsTests.ensemble(root, facts: facts)
        let document = try #require(TICDSFactsTests.text(TICDSFactsTests.member(facts, "documents", "0", "id")))
        let replaying = try TICDSReplayTests.ensemble(root, facts: facts, document: document)
        for file in files where file != "ReadMe.txt" {
            let url = app.appendingPathComponent(file)
            let original = Array(try Data(contentsOf: url))
            for (index, bytes) in Self.replacements(for: original, random: &random).enumerated() {
                try Data(bytes).write(to: url)
                let before = FileManager.default.enumerator(atPath: root.path)?.allObjects.count
                let report = try ensemble.inspectTICDS()
                let found = try ensemble.verifyTICDS(now: 1_795_176_000)
                // The replay (Spec/ticds.md 10) stops or fails with a code; it never crashes. Only
                // for the files it reads beyond what inspect reads (the WholeStores and the sets),
                // cut in half or reduced to SQLite's header: seconds, not a minute.
                if (file.contains("/WholeStore/") || file.contains("/SyncChanges/")) && (index == 1 || index == 2) {
                    do throws(EnsembleError) {
                        let replay = try replaying.replayTICDS()
                        _ = try? replay.storeState().documentBytes()
                    } catch {
                        #expect(!error.problems.isEmpty, "\(file)")
                    }
                }
                #expect(FileManager.default.enumerator(atPath: root.path)?.allObjects.count == before, "\(file)")
                // A file the reader reads and finds damaged is named; some files are read by name only.
                let named = (report[JSONPointer(["errors"])]?.arrayValue ?? []).contains { $0[JSONPointer(["file"])] == .string(file) }
                let readByName =
                    file.hasPrefix("Information/") || file.contains("/DeletedClients/") || file.contains("/IntegrityKey/")
                    || file.contains("/TemporaryFiles/")
                if !readByName && bytes.isEmpty && !file.hasSuffix(".recentsync") {
                    #expect(named || file.hasPrefix("Encryption/"), "\(file): empty, not reported")
                }
                _ = found
            }
            try Data(original).write(to: url)
        }
    }
}
