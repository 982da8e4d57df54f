import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs

/// A small binary file must not decode into far more object changes than it has bytes
/// (Spec/v2-binary.md 11): deflate makes millions of identical changes a few kilobytes.
@Suite("Binary events: object changes bounded by the file's size")
struct BinaryBombTests {
    static func event(changes: Int, distinct: Bool = false) -> Event {
        Event(
            uniqueIdentifier: "U", type: .save, storeIdentifier: "A", revision: 0, globalCount: 1, timestamp: 1,
            objectChanges: (0..<changes).map { index in
                ObjectChange(entity: "Item", globalIdentifier: distinct ? "item-\(index)" : "x", type: .delete)
            })
    }

    @Test("200,000 deflated changes in a file of a few kilobytes are refused: by the ratio, and without it by the changes per byte")
    func bomb() throws {
        let bytes = try V2BinaryEncoder().encodeBeyondReaderLimits(Self.event(changes: 200_000))
        #expect(bytes.count < 10_000, "the deflated file is \(bytes.count) bytes")
        var withoutRatio = BinaryReadingLimits()
        withoutRatio.maximumInflateRatio = 10_000
        for (limits, code) in [(BinaryReadingLimits(), FormatError.Code.binaryInflateRatio), (withoutRatio, .binaryTooLarge)] {
            do {
                _ = try V2BinaryDecoder(limits: limits).decode(bytes)
                Issue.record("decoded the bomb")
            } catch {
                #expect(error.code == code)
                #expect((error.location.offset ?? -1) < bytes.count)
            }
        }
    }

    @Test("an event whose changes name distinct objects decodes, deflated or not, however many changes it has")
    func withinTheLimit() throws {
        for deflate in [false, true] {
            for count in [1, 100, 50_000] {
                let bytes = try V2BinaryEncoder(deflateSections: deflate).encode(Self.event(changes: count, distinct: true))
                #expect(try V2BinaryDecoder().decode(bytes).objectChanges.count == count)
            }
        }
    }

    @Test("the limit is 4 changes per byte: one change more than that is refused, that many decode")
    func boundary() throws {
        let bytes = try V2BinaryEncoder().encodeBeyondReaderLimits(Self.event(changes: 2_000))
        var limits = BinaryReadingLimits()
        // The counting rule alone: identical changes deflate beyond the default ratio.
        limits.maximumInflateRatio = 10_000
        limits.maximumChangesPerFileByte = (2_000 - 1) / bytes.count
        #expect(throws: FormatError.self) { try V2BinaryDecoder(limits: limits).decode(bytes) }
        limits.maximumChangesPerFileByte = (2_000 - 1) / bytes.count + 1
        #expect(try V2BinaryDecoder(limits: limits).decode(bytes).objectChanges.count == 2_000)
        #expect(BinaryReadingLimits().maximumChangesPerFileByte == 4)
    }

    @Test("what the writer deflates, the reader reads: sections beyond the ratio or the changes per byte are stored as they are")
    func writerKeepsTheReadersLimits() throws {
        // 200,000 identical changes would deflate to a few kilobytes: over 4 changes per byte.
        let many = Self.event(changes: 200_000)
        #expect(try V2BinaryDecoder().decode(try V2BinaryEncoder(deflateSections: true).encode(many)).objectChanges.count == 200_000)
        // Eight megabytes of one character deflate about 1030 times: more than a reader accepts.
        var long = Self.event(changes: 1, distinct: true)
        long.objectChanges[0] = ObjectChange(
            entity: "Item", globalIdentifier: "item-0", type: .insert,
            propertyChanges: [PropertyChange(name: "text", value: .attribute(.string(String(repeating: "a", count: 8 << 20))))])
        let bytes = try V2BinaryEncoder(deflateSections: true).encode(long)
        #expect((try? V2BinaryDecoder().decode(bytes)) == long, "the writer's file reads back")
        let beyond = try V2BinaryEncoder().encodeBeyondReaderLimits(long)
        #expect(beyond.count < bytes.count / 100)
        let refusal = Result { () throws(FormatError) in try V2BinaryDecoder().decode(beyond) }.map { _ in "decoded" }
        #expect((try? refusal.get()) == nil, "deflated beyond the ratio, the same event is refused")
    }
}
