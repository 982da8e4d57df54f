import Foundation
import Testing
import JSONDocument
import EventCodecs

@Suite("Data blob container")
struct DataBlobTests {
    @Test("raw data files are their own content; a container round-trips with and without deflate")
    func roundTrip() throws {
        let raw: [UInt8] = Array("hello".utf8)
        #expect(try DataBlob.content(of: raw) == raw)
        let big = [UInt8](repeating: 7, count: 20_000)
        for deflate in [false, true] {
            let container = DataBlob.container(big, deflate: deflate)
            #expect(DataBlob.isContainer(container))
            #expect(try DataBlob.content(of: container) == big)
        }
        // 20,000 equal bytes deflate more than 100 times: stored (flags 0), so that it reads back.
        #expect(DataBlob.container(big, deflate: true)[9] == 0)
        // Text deflates a few times: deflated (flags 1) and smaller.
        let text = Array((0..<2_000).map { "line \($0) of a note\n" }.joined().utf8)
        let deflated = DataBlob.container(text, deflate: true)
        #expect(deflated[9] == 1 && deflated.count < text.count / 2)
        #expect(try DataBlob.content(of: deflated) == text)
    }

    @Test("a damaged container is refused with its code", arguments: [0, 1, 2])
    func damage(kind: Int) {
        var container = DataBlob.container([UInt8](repeating: 1, count: 100))
        let expected: FormatError.Code
        switch kind {
        case 0: container[container.count - 1] ^= 1; expected = .blobChecksum
        case 1: container.removeLast(10); expected = .blobTruncated
        default: container = Array(container.prefix(20)); expected = .blobTruncated
        }
        do throws(FormatError) {
            _ = try DataBlob.content(of: container)
            Issue.record("accepted a damaged container")
        } catch {
            #expect(error.code == expected)
        }
    }
}
