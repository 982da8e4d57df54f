import CloudFolder
import EventCodecs
import Foundation
import JSONDocument
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

    @Test("a container of several chunks hands on its content after the header, checked; a byte changed in its last chunk is found", arguments: [false, true])
    func container(deflate: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chunks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("blob")
        // Content that deflates little, so that the stored bytes span several chunks either way.
        var state: UInt64 = 7
        let content = (0..<((5 << 19) + 7)).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        var stored = DataBlob.container(content, deflate: deflate)
        #expect(stored.count > 2 << 20)
        try Data(stored).write(to: file)
        var joined: [UInt8] = []
        try DataFileReader.check(at: file) { joined += $0 }
        let same = joined == content
        #expect(same, "the content handed on differs (\(joined.count) bytes against \(content.count))")
        stored[stored.count - 3] ^= 0x01
        try Data(stored).write(to: file)
        #expect(throws: FormatError.self) { try DataFileReader.check(at: file) }
    }
}
