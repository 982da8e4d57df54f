import Foundation
import Testing
import JSONDocument

/// iCloud Drive's duplicate folders (Spec/cloud-layout.md 3.1): a folder split between `E` and
/// `E 2` (or the root and `root 2`) reads as the folder a device gets once it folds them back.
@Suite("Duplicate folders")
struct DuplicateFolderTests {
    /// The golden cases that merge one ensemble `cloud/E` to a state (exit 0, `merge cloud`).
    static let cases: [String] = {
        let root = Run.packageRoot.appendingPathComponent("Fixtures/merge")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return names.sorted().filter { name in
            guard let bytes = try? Data(contentsOf: root.appendingPathComponent("\(name)/case.json")),
                let json = try? JSONParser.parse(Array(bytes))
            else { return false }
            return json[JSONPointer(["exitCode"])] == JSONValue(Int64(0))
                && json[JSONPointer(["command"])] == .array([.string("merge"), .string("cloud")])
                && FileManager.default.fileExists(atPath: root.appendingPathComponent("\(name)/cloud/E").path)
                // A case with duplicate folders of its own (`duplicate-root-copies`) is not split again.
                && !FileManager.default.fileExists(atPath: root.appendingPathComponent("\(name)/cloud 2").path)
        }
    }()

    /// Copies the case's `cloud/` to `scratch/<rootName>/`, then moves every second file of each
    /// folder of `E` to `<duplicate>` (a path relative to scratch) and copies one event into both.
    static func split(_ name: String, into scratch: URL, rootName: String = "cloud", duplicate: String) throws -> URL {
        let root = scratch.appendingPathComponent(rootName)
        try FileManager.default.copyItem(at: Run.packageRoot.appendingPathComponent("Fixtures/merge/\(name)/cloud"), to: root)
        let ensemble = root.appendingPathComponent("E")
        let copy = scratch.appendingPathComponent(duplicate)
        var sharedOne = false
        for folder in ["stores", "events", "baselines", "data"] {
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: ensemble.appendingPathComponent(folder).path)) ?? []).sorted()
            for (index, file) in files.enumerated() {
                let target = copy.appendingPathComponent("\(folder)/\(file)")
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                let source = ensemble.appendingPathComponent("\(folder)/\(file)")
                if index % 2 == 1 {
                    try FileManager.default.moveItem(at: source, to: target)
                } else if folder == "events" && !sharedOne {
                    try FileManager.default.copyItem(at: source, to: target)
                    sharedOne = true
                }
            }
        }
        return root
    }

    static func expectedState(_ name: String) throws -> String {
        String(decoding: try Data(contentsOf: Run.packageRoot.appendingPathComponent("Fixtures/merge/\(name)/expected/state.json")), as: UTF8.self)
    }

    @Test("an ensemble split between E and E 2 merges to the case's expected state, through the root and directly", arguments: cases)
    func ensembleDuplicate(name: String) throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let root = try Self.split(name, into: scratch, duplicate: "cloud/E 2")
        let expected = try Self.expectedState(name) + "\n"
        for input in [root.path, root.appendingPathComponent("E").path] {
            let result = try HostileFolderTests.run(["merge", input])
            #expect(result.status == 0, "\(name): \(input)")
            #expect(result.stdout == expected, "\(name): merging \(input)")
        }
    }

    @Test("a root split between cloud and cloud 2 merges to the expected state", arguments: cases.prefix(6))
    func rootDuplicate(name: String) throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let root = try Self.split(name, into: scratch, duplicate: "cloud 2/E")
        let result = try HostileFolderTests.run(["merge", root.path])
        #expect(result.status == 0)
        #expect(result.stdout == (try Self.expectedState(name)) + "\n", "\(name)")
    }

    @Test("verify names each duplicate, the files a device copies, and shared files whose bytes differ")
    func verifyReportsDuplicates() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let root = try Self.split("baseline-covers", into: scratch, duplicate: "cloud/E 2")
        // A file in both whose bytes differ: the device keeps the ensemble's.
        let duplicateStores = root.appendingPathComponent("E 2/stores")
        try Data("other bytes".utf8).write(to: duplicateStores.appendingPathComponent("ALPHA-STORE"))
        let result = try HostileFolderTests.run(["verify", "--json", root.path])
        let report = try JSONParser.parse(Array(result.stdout.utf8))
        let diagnostics = report[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
        let duplicate = try #require(diagnostics.first { $0[JSONPointer(["code"])] == .string("verify.duplicate-folder") })
        #expect(duplicate[JSONPointer(["files"])] == .array([.string("../E 2")]))
        #expect(duplicate[JSONPointer(["details", "differing"])] == .array([.string("stores/ALPHA-STORE")]))
        let copied = duplicate[JSONPointer(["details", "copied"])]?.arrayValue ?? []
        #expect(copied.contains(.string("events/2_BRAVO-STORE_0.cdeevent")), "\(copied)")
        #expect(!copied.contains(.string("stores/ALPHA-STORE")), "the ensemble has it: not copied")
        // The root holds one ensemble: E 2 is its duplicate, not a second ensemble.
        #expect(report[JSONPointer(["ensembles"])]?.arrayValue?.count == 1)
        let inspect = try JSONParser.parse(Array(try HostileFolderTests.run(["inspect", "--json", root.path]).stdout.utf8))
        #expect(inspect[JSONPointer(["ensembles", "0", "duplicateFolders", "0", "path"])] == .string("../E 2"))
    }

    @Test("convert writes the folded folder: every file of the duplicate at its place in the ensemble")
    func convertFolds() throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let root = try Self.split("baseline-covers", into: scratch, duplicate: "cloud/E 2")
        let converted = scratch.appendingPathComponent("converted")
        #expect(try HostileFolderTests.run(["convert", root.appendingPathComponent("E").path, converted.path]).status == 0)
        #expect(FileManager.default.fileExists(atPath: converted.appendingPathComponent("events/2_BRAVO-STORE_0.cdeevent").path))
        #expect(FileManager.default.fileExists(atPath: converted.appendingPathComponent("stores/BRAVO-STORE").path))
        #expect(!FileManager.default.fileExists(atPath: scratch.appendingPathComponent("E 2").path))
        let merged = try HostileFolderTests.run(["merge", converted.path])
        #expect(merged.stdout == (try Self.expectedState("baseline-covers")) + "\n")
    }
}
