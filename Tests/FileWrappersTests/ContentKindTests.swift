import Foundation
import Testing
import FileWrappers

/// Detection by the first bytes (Spec/wrappers.md 2) and the zip writer and reader
/// (Spec/wrappers.md 4).
@Suite("File kinds and zip archives")
struct ContentKindTests {
    @Test(
        "each signature gives its kind",
        arguments: [
            ([0x89, 0x45, 0x4E, 0x53], ContentKind.v2Binary),
            (Array("  \n{\"a\":1}".utf8), .json),
            (Array("[1]".utf8), .json),
            ([0xEF, 0xBB, 0xBF] + Array("{}".utf8), .json),
            ([], .json),
            (Array("hello".utf8), .json),
            ([0x50, 0x4B, 0x03, 0x04, 0, 0], .zip),
            ([0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 18), .zip),
            ([0x03, 0x01] + [UInt8](repeating: 0, count: 80), .encrypted),
            ([0x03, 0x01] + [UInt8](repeating: 0, count: 79), .unknown),
            ([0x03, 0x00] + [UInt8](repeating: 0, count: 64), .encrypted),
            ([0x03, 0x02] + [UInt8](repeating: 0, count: 80), .unknown),
            (Array("bplist00".utf8), .binaryPropertyList),
            (Array("SQLite format 3".utf8) + [0], .sqlite),
            (Array("SQLite format 3".utf8), .json),
            (Array("<?xml version=\"1.0\"?>\n<plist version=\"1.0\"><dict/></plist>".utf8), .xmlPropertyList),
            (Array("<html></html>".utf8), .json),
            ([0x00, 0xFF, 0x13], .unknown),
            ([0xFE, 0xED], .unknown),
        ] as [([UInt8], ContentKind)])
    func detection(bytes: [UInt8], kind: ContentKind) {
        #expect(ContentKind.detect(bytes) == kind, "\(firstBytesDescription(bytes))")
    }

    @Test("the first bytes are shown in hexadecimal and as text")
    func firstBytes() {
        #expect(
            firstBytesDescription(Array("SQLite format 3".utf8) + [0, 1])
                == #"first bytes 53 51 4C 69 74 65 20 66 6F 72 6D 61 74 20 33 00 ("SQLite format 3.")"#)
        #expect(firstBytesDescription([]) == "no bytes")
    }

    @Test("the zip writer's archives read back, stored and deflated, with any content", arguments: [0, 1, 100, 70_000])
    func zipRoundTrip(size: Int) throws {
        let content = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 / 3) }
        for deflate in [false, true] {
            let archive = ZipArchive.write(name: "0_A_0.cdeevent", content: content, deflate: deflate)
            #expect(ContentKind.detect(archive) == .zip)
            let entry = try ZipArchive.readSingleEntry(archive, maximumBytes: 1 << 20)
            #expect(entry.content == content)
            #expect(entry.name == "0_A_0.cdeevent")
            #expect(entry.method == (deflate && size == 70_000 ? .deflated : .stored))
        }
    }

    @Test("the writer stores what would deflate beyond 100 times, so that its archives always read")
    func writerKeepsTheRatio() throws {
        let content = [UInt8](repeating: 0x20, count: 1 << 20)
        let archive = ZipArchive.write(name: "x", content: content)
        #expect(try ZipArchive.readSingleEntry(archive, maximumBytes: 1 << 21).content == content)
        #expect(try ZipArchive.readSingleEntry(archive, maximumBytes: 1 << 21).method == .stored)
    }

    @Test("an entry larger than the limit is refused from its claimed size")
    func tooLarge() {
        let archive = ZipArchive.write(name: "x", content: [UInt8](repeating: 7, count: 1000), deflate: false)
        do {
            _ = try ZipArchive.readSingleEntry(archive, maximumBytes: 999)
            Issue.record("read")
        } catch {
            #expect(error.code == .wrapTooLarge)
        }
    }

    @Test("every prefix of a wrapped file is refused with a typed error, never a crash")
    func everyPrefix() throws {
        let content = Array("{\"uniqueIdentifier\":\"U\"}".utf8)
        let files = [
            ZipArchive.write(name: "a", content: content), ZipArchive.write(name: "a", content: content, deflate: false),
            RNCryptor.encrypt(content, password: Array("pw".utf8)),
            ZipArchive.write(name: "a", content: RNCryptor.encrypt(content, password: Array("pw".utf8))),
        ]
        let unwrapper = Unwrapper(password: PasswordSource(password: "pw"))
        for file in files {
            #expect(try unwrapper.unwrap(file).bytes == content)
            for length in 0..<file.count {
                let prefix = Array(file.prefix(length))
                if let unwrapped = try? unwrapper.unwrap(prefix) {
                    // A prefix short enough to be detected as something else is not unwrapped.
                    #expect(unwrapped.layers.isEmpty || unwrapped.bytes != content, "prefix \(length)")
                }
            }
        }
    }
}
