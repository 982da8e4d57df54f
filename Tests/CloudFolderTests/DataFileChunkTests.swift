import CloudFolder
import Foundation
import Testing

/// A data or registration file is handed on a chunk of 1 MiB at a time (Spec/data-blobs.md 4):
/// every byte once, in order, whatever the file's size against the chunk.
@Suite("Data files read in chunks")
struct DataFileChunkTests {
    @Test("every byte once and in order, in chunks of 1 MiB and a last shorter one", arguments: [0, 1, 1 << 20, (1 << 20) + 1, (5 << 19) + 7])
    func chunks(size: Int) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chunks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("blob")
        let content = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        try Data(content).write(to: file)
        var sizes: [Int] = [], joined: [UInt8] = []
        try DataFileReader.forEachChunk(at: file) { chunk in
            sizes.append(chunk.count)
            joined += chunk
        }
        let mebibyte = 1 << 20
        let expected = Array(repeating: mebibyte, count: size / mebibyte) + (size % mebibyte == 0 ? [] : [size % mebibyte])
        #expect(sizes == expected)
        // A Bool, not the arrays: a failure would print megabytes, element by element.
        let same = joined == content
        #expect(same, "the chunks joined differ from the file (\(joined.count) bytes against \(content.count))")
    }
}
