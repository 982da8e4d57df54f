import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import TestSupport

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

    /// Limits with the value budget of Spec/README.md 6.2 set to `maximum` values.
    static func budget(_ maximum: Int, storedBytes: Int = 1) -> BinaryReadingLimits {
        var limits = BinaryReadingLimits()
        var budget = DecodedValueBudget(storedBytes: storedBytes)
        budget.maximumValues = maximum
        limits.valueBudget = budget
        return limits
    }

    @Test("the value budget counts 4 per change and property change, 1 per string, revision entry, data file and identifier")
    func valueBudgetCounts() throws {
        // Worked by hand: strings U, A, Item, x, n, title, t, r1, r2, f (10); one revision entry;
        // one change (4) with one data file (1) and two properties (8), a to-many of two
        // identifiers (2): 10 + 1 + 4 + 1 + 8 + 2 = 26.
        let event = Event(
            uniqueIdentifier: "U", type: .save, storeIdentifier: "A", revision: 0, globalCount: 1, timestamp: 1,
            objectChanges: [
                ObjectChange(
                    entity: "Item", globalIdentifier: "x", type: .insert,
                    propertyChanges: [
                        PropertyChange(name: "title", value: .attribute(.string("t"))),
                        PropertyChange(name: "n", value: .toMany(added: ["r1", "r2"], removed: [])),
                    ], dataFiles: ["f"])
            ])
        let bytes = try V2BinaryEncoder().encode(event)
        #expect(try V2BinaryDecoder(limits: Self.budget(26)).decode(bytes) == event)
        // The merge's numbered-only reading spends the budget alike: refused at the same byte.
        for maximum in 0...26 {
            #expect(BinaryNumberedDifferential.mismatch(bytes, decoder: V2BinaryDecoder(limits: Self.budget(maximum))) == nil, "\(maximum)")
        }
        do {
            _ = try V2BinaryDecoder(limits: Self.budget(25)).decode(bytes)
            Issue.record("decoded beyond the budget")
        } catch {
            #expect(error.code == .binaryTooLarge)
            #expect(error.message.contains("25"))
        }
    }

    @Test("a deflated file of many changes within 4 per byte is refused by the value budget of its size, before the changes are built")
    func valueBudgetRefusesDeflatedChanges() throws {
        // 60,000 changes, each of one of four identifiers picked at random, deflate to about 2
        // bits each: within 4 changes per byte, beyond 2 values per byte (4 per change).
        var state: UInt64 = 7
        let event = Event(
            uniqueIdentifier: "U", type: .save, storeIdentifier: "A", revision: 0, globalCount: 1, timestamp: 1,
            objectChanges: (0..<60_000).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return ObjectChange(entity: "Item", globalIdentifier: ["a", "b", "c", "d"][Int(state >> 62)], type: .delete)
            })
        let bytes = try V2BinaryEncoder().encodeBeyondReaderLimits(event)
        #expect(bytes.count > 15_000 && bytes.count <= 32_768, "\(bytes.count) bytes")
        var limits = BinaryReadingLimits()
        limits.maximumInflateRatio = 10_000
        #expect(try V2BinaryDecoder(limits: limits).decode(bytes).objectChanges.count == 60_000, "within the other limits")
        limits.valueBudget = DecodedValueBudget(storedBytes: bytes.count)
        #expect(limits.valueBudget?.maximumValues == 65_536, "the smallest budget")
        do {
            _ = try V2BinaryDecoder(limits: limits).decode(bytes)
            Issue.record("decoded beyond the budget")
        } catch {
            #expect(error.code == .binaryTooLarge)
            #expect(error.message.contains("65536") && error.message.contains("\(bytes.count) bytes as stored"), "\(error.message)")
        }
    }

    @Test("the writer deflates only what a reader reads within the value budget of the file it writes")
    func writerKeepsTheValueBudget() throws {
        // 20,000 changes of one property each: 160,000 values, far more than the smallest budget,
        // in a deflated file of a few kilobytes (under 4 changes per byte).
        let event = Event(
            uniqueIdentifier: "U", type: .save, storeIdentifier: "A", revision: 0, globalCount: 1, timestamp: 1,
            objectChanges: (0..<20_000).map { index in
                ObjectChange(
                    entity: "Item", globalIdentifier: "item-\(index)", type: .update,
                    propertyChanges: [PropertyChange(name: "done", value: .attribute(.bool(true)))])
            })
        let deflated = try V2BinaryEncoder().encodeBeyondReaderLimits(event)
        var limits = BinaryReadingLimits()
        limits.maximumInflateRatio = 10_000
        limits.valueBudget = DecodedValueBudget(storedBytes: deflated.count)
        #expect(throws: FormatError.self, "deflated, the file is beyond its budget") { try V2BinaryDecoder(limits: limits).decode(deflated) }
        let bytes = try V2BinaryEncoder(deflateSections: true).encode(event)
        limits.valueBudget = DecodedValueBudget(storedBytes: bytes.count)
        #expect(try V2BinaryDecoder(limits: limits).decode(bytes) == event)
        #expect(bytes.count > deflated.count, "written without deflating: \(bytes.count) bytes")
    }
}
