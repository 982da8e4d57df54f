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
        #expect(DataBlob.container(big, deflate: true).count < 1_000)
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
