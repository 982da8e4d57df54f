import Testing
import JSONDocument
@testable import CloudFolder

/// The index of `events/` gives the same groups in the same order whether it kept the files in
/// memory, moved them to SQLite part way, or held them in SQLite from the first.
@Suite("Event file index")
struct EventFileIndexTests {
    typealias File = (globalCount: Int64, store: String, revision: Int64, part: Int?, path: String)

    /// The groups, each as its files (global count, the store's UTF-8 bytes, revision, part, path).
    static func groups(_ files: [File], memoryLimit: Int) throws -> [[String]] {
        let index = EventFileIndex(memoryLimit: memoryLimit)
        for file in files {
            let name = EventFileName(
                globalCount: file.globalCount, storeIdentifier: file.store, revision: file.revision, part: file.part.map { PartNumber(index: $0, count: 2) })
            try index.add(name, ListedEntry(path: file.path, entry: .event(name), size: 1))
        }
        let groups = try index.groups()
        var read: [[String]] = []
        while let group = try groups.next() {
            read.append(
                group.files.map { file in
                    "\(group.name.globalCount) \(Array(group.name.storeIdentifier.utf8)) \(group.name.revision) \(file.part.map { "\($0.index)" } ?? "-") \(file.entry.path)"
                })
        }
        return read
    }

    @Test("groups come in name order: numbers as numbers, stores by their bytes, no part first, then by path")
    func order() throws {
        let files: [File] = [
            (2, "B", 1, nil, "g"), (1, "b", 1, nil, "e"), (1, "B", 10, nil, "d3"), (1, "B", 2, nil, "x2"), (1, "B", 1, 2, "c3"),
            (1, "\u{C4}", 1, nil, "f2"), (1, "B", 1, 1, "c2"), (10, "A", 1, nil, "i"), (1, "B", 2, nil, "x1"), (1, "A\u{301}", 1, nil, "a"),
            (1, "B", 1, nil, "c1"), (9, "A", 1, nil, "h"), (1, "\u{C1}", 1, nil, "f1"),
        ]
        // Written out by hand: 9 before 10 and 2 before 10 (numbers); "A" + U+0301 (41 CC 81) <
        // "B" (42) < "b" (62) < U+00C1 (C3 81) < U+00C4 (C3 84), by bytes, though Swift calls
        // "A" + U+0301 and U+00C1 equal; within one event no part, then parts 1 and 2; two files
        // of one name by path.
        let expected = [
            ["1 [65, 204, 129] 1 - a"], ["1 [66] 1 - c1", "1 [66] 1 1 c2", "1 [66] 1 2 c3"], ["1 [66] 2 - x1", "1 [66] 2 - x2"],
            ["1 [66] 10 - d3"], ["1 [98] 1 - e"], ["1 [195, 129] 1 - f1"], ["1 [195, 132] 1 - f2"], ["2 [66] 1 - g"], ["9 [65] 1 - h"],
            ["10 [65] 1 - i"],
        ]
        for limit in [EventFileIndex(memoryLimit: 32_768).memoryLimit, 5, 0] {
            #expect(try Self.groups(files, memoryLimit: limit) == expected, "kept in memory up to \(limit) files")
        }
    }

    @Test("kept in memory, moved to SQLite part way or held in SQLite: the same groups for many shuffled names")
    func sameGroups() throws {
        var generator = SystemRandomNumberGenerator()
        let stores = ["A", "B", "a", "\u{C1}", "A\u{301}", "\u{1F600}", "AB", "A B"]
        for _ in 0..<20 {
            let files: [File] = (0..<300).map { number in
                (
                    Int64.random(in: -3...40, using: &generator), stores.randomElement(using: &generator) ?? "A", Int64.random(in: 0...12, using: &generator),
                    Bool.random(using: &generator) ? nil : Int.random(in: 1...2, using: &generator), "p\(number)"
                )
            }
            let inSQLite = try Self.groups(files, memoryLimit: 0)
            #expect(try Self.groups(files, memoryLimit: 1_000) == inSQLite)
            #expect(try Self.groups(files, memoryLimit: 150) == inSQLite)
        }
    }
}
