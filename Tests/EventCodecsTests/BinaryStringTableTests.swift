import Deflate
import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import TestSupport

/// The string table of the v2 binary encoding (Spec/v2-binary.md 6 and 10.1): which strings take
/// the UUID-prefixed form, the order of the table, its limit, and extensions found by entity.
@Suite("Binary events: the string table")
struct BinaryStringTableTests {
    /// An event whose only change sets a string attribute to each of `values`, one property each.
    static func event(values: [String], uniqueIdentifier: String = "U") -> Event {
        let properties = values.enumerated().map { PropertyChange(name: "p\($0.offset)", value: .attribute(.string($0.element))) }
        return Event(
            uniqueIdentifier: uniqueIdentifier, type: .save, storeIdentifier: "S", revision: 0, globalCount: 1, timestamp: 1,
            objectChanges: [ObjectChange(entity: "Item", globalIdentifier: "i", type: .update, propertyChanges: properties)])
    }

    /// 16 bytes that use every hexadecimal digit in every position over a few hundred seeds.
    static func uuidText(_ seed: Int) -> String {
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15
        let bytes = (0..<16).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13],
                bytes[14], bytes[15]
            )
        ).uuidString
    }

    @Test("uppercase UUID texts, with or without more text after them, read back exactly")
    func uuidStrings() throws {
        let values = (0..<300).map { Self.uuidText($0) + ["", "-7", "-4242-0000A1B2C3D4E5F6", "é", "\u{0}"][$0 % 5] }
        let event = Self.event(values: values, uniqueIdentifier: Self.uuidText(1000))
        let bytes = try V2BinaryEncoder().encode(event)
        #expect(try V2BinaryDecoder().decode(bytes) == event)
        #expect(BinaryNumberedDifferential.mismatch(bytes) == nil)
    }

    @Test("the merge's numbered-only reading holds the table byte for byte: UUID-prefixed, non-ASCII and NUL strings as identifiers, names and values")
    func numberedOnlyStrings() throws {
        // Two UUIDs alike in their first half.
        let twins = ["01234567-89AB-CDEF-0000-000000000001", "01234567-89AB-CDEF-0000-000000000002"]
        let texts = (0..<40).map { Self.uuidText($0) + ["", "-7", "é", "\u{0}", "/x"][$0 % 5] } + ["é", "日本", "\u{10FFFF}", "a\u{0}b", "Title 12"] + twins
        let changes = texts.indices.map { index in
            ObjectChange(
                entity: index % 2 == 0 ? "Ünit" : "Item", globalIdentifier: texts[index], type: .update,
                propertyChanges: [
                    PropertyChange(name: "ñame\(index % 3)", value: .attribute(.string(texts[index]))),
                    PropertyChange(name: "related", value: .toMany(added: [texts[(index + 1) % texts.count]], removed: [])),
                ])
        }
        let event = Event(
            uniqueIdentifier: Self.uuidText(99), type: .save, storeIdentifier: Self.uuidText(98), revision: 0, globalCount: 1, timestamp: 1,
            objectChanges: changes)
        let bytes = try V2BinaryEncoder().encode(event)
        #expect(BinaryNumberedDifferential.mismatch(bytes) == nil)
        let numbered = try V2BinaryDecoder().decodeNumbered(bytes)
        for text in texts + ["Ünit", "ñame1", Self.uuidText(99)] {
            let found = (0..<numbered.stringCount).contains { number in numbered.withBytes(of: Int32(number)) { $0.elementsEqual(text.utf8) } }
            #expect(found, "\(text.debugDescription) is not in the table")
        }
        // The table's own calls agree with the strings' bytes, UUIDs kept as halves or not.
        let numbers = (0..<Int32(numbered.stringCount)).map { $0 }
        let strings = numbers.map { numbered.string($0) }
        for a in numbers {
            for b in numbers {
                #expect(numbered.precedes(a, b) == utf8Precedes(strings[Int(a)], strings[Int(b)]), "\(strings[Int(a)]) \(strings[Int(b)])")
                #expect(numbered.same(a, b) == (ExactString(strings[Int(a)]) == ExactString(strings[Int(b)])), "\(strings[Int(a)]) \(strings[Int(b)])")
            }
        }
        #expect(numbered.inStringOrder(numbers.reversed()[...]).map { strings[Int($0)] } == strings.sorted(by: utf8Precedes))
    }

    @Test("a string that many values name is one String in the merge's numbered form, as in the event: a reference costs a byte, not the string")
    func valuesShareTheirString() throws {
        let long = String(repeating: "a long value ", count: 20)
        let changes = (0..<3).map { index in
            ObjectChange(
                entity: "Item", globalIdentifier: "i\(index)", type: .update,
                propertyChanges: [PropertyChange(name: "a", value: .attribute(.string(long))), PropertyChange(name: "b", value: .attribute(.url(long)))])
        }
        let event = Event(uniqueIdentifier: "U", type: .save, storeIdentifier: "S", revision: 0, globalCount: 1, timestamp: 1, objectChanges: changes)
        let numbered = try V2BinaryDecoder().decodeNumbered(try V2BinaryEncoder().encode(event))
        let values = numbered.attributes.compactMap { value -> String? in
            switch value {
            case .string(let string), .url(let string): string
            default: nil
            }
        }
        #expect(values.count == 6 && values[0] == long)
        #expect(values.allSatisfy { ExactString.identical($0, values[0]) }, "one String, made once")
    }

    @Test("a string is UUID-prefixed (16 bytes instead of 36) only when all its first 36 characters are those of an uppercase UUID")
    func uuidPrefixOnlyForUppercaseUUIDs() throws {
        let uuid = Array(Self.uuidText(7).utf8)
        let prefixed = try V2BinaryEncoder().encode(Self.event(values: [String(decoding: uuid, as: UTF8.self)]))
        let hyphens: Set = [8, 13, 18, 23]
        for position in 0..<uuid.count {
            // Neighbours of the digits, of the letters and of the hyphen; "é" is two bytes.
            let replacements = (hyphens.contains(position) ? ["0", "A", "_", "é"] : ["a", "f", "/", ":", "@", "`", "G", "g", "-", "é"]).map { Array($0.utf8) }
            for replacement in replacements {
                var bytes = uuid
                bytes.replaceSubrange(position...position, with: replacement)
                let text = String(decoding: bytes, as: UTF8.self)
                let event = Self.event(values: [text])
                let encoded = try V2BinaryEncoder().encode(event)
                #expect(encoded.count == prefixed.count + 20 + replacement.count - 1, "\(text) is stored as text")
                #expect(try V2BinaryDecoder().decode(encoded) == event)
                #expect(BinaryNumberedDifferential.mismatch(encoded) == nil, "\(text)")
            }
        }
        // Shorter than a UUID text: text as well.
        let short = Self.event(values: [String(decoding: uuid.dropLast(), as: UTF8.self)])
        #expect(try V2BinaryDecoder().decode(try V2BinaryEncoder().encode(short)) == short)
    }

    @Test("the table is sorted by all bytes of its strings, where the first eight are equal or padded with NUL too")
    func tableOrder() throws {
        let values = [
            "", "\u{0}", "\u{0}\u{0}", "A", "A\u{0}", "AB", "ABCDEFG", "ABCDEFG\u{0}", "ABCDEFGH", "ABCDEFGH\u{0}", "ABCDEFGHI", "ABCDEFGG\u{7F}",
            "ABCDEFGé", "Title 12", "Title 120", "Title 1200", "Title 13", "é", "éé", "\u{10FFFF}",
        ]
        let event = Self.event(values: values)
        // The reader refuses a table out of order (section 6, rule 4).
        let bytes = try V2BinaryEncoder().encode(event)
        #expect(try V2BinaryDecoder().decode(bytes) == event)
        #expect(BinaryNumberedDifferential.mismatch(bytes) == nil)
    }

    @Test("two UUID entries repeated or out of order are refused by every reading, as any other strings are")
    func uuidEntriesOutOfOrder() throws {
        // Differing in the low half only, then in the high half only: each half decides.
        for (first, second) in [
            ("5E1F0C2A-0000-4000-8000-000000000001", "5E1F0C2A-0000-4000-8000-000000000002"),
            ("1A000000-0000-4000-8000-0000000000FF", "2A000000-0000-4000-8000-000000000000"),
        ] {
            let event = Self.event(values: [first, second]), encoded = try V2BinaryEncoder().encode(event)
            #expect(try V2BinaryDecoder().decode(encoded) == event)
            #expect(BinaryNumberedDifferential.mismatch(encoded) == nil)
            let raw = { (text: String) in withUnsafeBytes(of: UUID(uuidString: text)?.uuid) { Array($0.prefix(16)) } }
            let a = raw(first), b = raw(second)
            let at = try #require((0...(encoded.count - 16)).first { encoded[$0..<($0 + 16)].elementsEqual(a) })
            let bt = try #require((0...(encoded.count - 16)).first { encoded[$0..<($0 + 16)].elementsEqual(b) })
            #expect(at < bt, "the table is in order as written")
            for (name, replacing) in [("repeated", [(bt, a)]), ("swapped", [(at, b), (bt, a)])] {
                var bytes = encoded
                for (offset, uuid) in replacing { bytes.replaceSubrange(offset..<(offset + 16), with: uuid) }
                Self.matchCRC(&bytes)
                do throws(FormatError) {
                    _ = try V2BinaryDecoder().decode(bytes)
                    Issue.record("a table with its UUIDs \(name) was read")
                } catch {
                    #expect(error.code == .binaryInvalidValue, "\(name)")
                    #expect(error.message.contains("not sorted and unique"), "\(name): \(error.message)")
                }
                // The numbered readings refuse it with the same error.
                #expect(BinaryNumberedDifferential.mismatch(bytes) == nil, "\(name)")
            }
        }
    }

    /// Makes the CRC-32 of the first section (the strings) or of the last match its payload again
    /// (frames: Spec/v2-binary.md 5.1).
    static func matchCRC(_ bytes: inout [UInt8], ofLastSection last: Bool = false) {
        var position = V2Binary.magic.count + 2
        var frames: [(crc: Int, payload: Range<Int>)] = []
        func varint() -> Int {
            var value = 0
            var shift = 0
            while true {
                let byte = bytes[position]
                position += 1
                value |= Int(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
        while position < bytes.count {
            _ = (varint(), varint())
            let length = varint()
            frames.append((position, (position + 4)..<(position + 4 + length)))
            position += 4 + length
        }
        guard let frame = last ? frames.last : frames.first else { return }
        let crc = Zlib.crc32(bytes[frame.payload])
        for index in 0..<4 { bytes[frame.crc + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
    }

    @Test("a table of more strings than the limit is refused before its strings are read")
    func stringLimit() throws {
        let event = Self.event(values: (0..<1_000).map { "value \($0)" })
        let bytes = try V2BinaryEncoder().encode(event)
        // 1,000 values, 1,000 property names, and "U", "S", "Item", "i".
        var limits = BinaryReadingLimits()
        limits.maximumStrings = 2_003
        #expect(BinaryNumberedDifferential.mismatch(bytes, decoder: V2BinaryDecoder(limits: limits)) == nil)
        do throws(FormatError) {
            _ = try V2BinaryDecoder(limits: limits).decode(bytes)
            Issue.record("a table over the limit was read")
        } catch {
            #expect(error.code == .binaryTooLarge)
            // Reported at the count's first byte (Spec/v2-binary.md 11): 2,004 is the varint D4 0F.
            let offset = error.location.offset ?? -1
            #expect(bytes.indices.contains(offset + 1) && bytes[offset] == 0xD4 && bytes[offset + 1] == 0x0F, "offset \(offset)")
        }
        limits.maximumStrings = 2_004
        #expect(try V2BinaryDecoder(limits: limits).decode(bytes) == event)
    }

    /// Changes of three entities, with unknown members on the event, on a change and on a
    /// property change.
    static func extendedEvent() -> Event {
        var changes = ["A", "B", "C"].flatMap { entity in
            (0..<3).map { index in
                ObjectChange(
                    entity: entity, globalIdentifier: "\(entity)\(index)", type: .update,
                    propertyChanges: [PropertyChange(name: "a", value: .attribute(.integer(1))), PropertyChange(name: "b", value: .attribute(.null))])
            }
        }
        changes[4].unknownFields["x-note"] = .string("second B")
        changes[6].propertyChanges[1].unknownFields["x-unit"] = .string("first C, second property")
        changes[8].unknownFields["x-last"] = .bool(true)
        var event = Event(uniqueIdentifier: "U", type: .save, storeIdentifier: "S", revision: 0, globalCount: 1, timestamp: 1, objectChanges: changes)
        event.unknownFields["x-origin"] = .string("test")
        return event
    }

    @Test("unknown members go back to the change their pointer names among its entity's changes")
    func extensionsByEntity() throws {
        let event = Self.extendedEvent()
        let decoded = try V2BinaryDecoder().decode(try V2BinaryEncoder().encode(event))
        #expect(decoded == event)
        #expect(decoded.objectChanges[4].unknownFields["x-note"] == .string("second B"))
        #expect(decoded.objectChanges[6].propertyChanges[1].unknownFields["x-unit"] != nil)
    }

    @Test("an extension pointer that names an entity without changes is refused at its entry")
    func extensionOfMissingEntity() throws {
        var bytes = try V2BinaryEncoder().encode(Self.extendedEvent())
        let pointer = Array("/changesByEntity/B/1/x-note".utf8)
        let start = try #require((0...(bytes.count - pointer.count)).first { bytes[$0..<($0 + pointer.count)].elementsEqual(pointer) })
        // "B" becomes "D", which no change has; the entry is the first, so the order still holds.
        bytes[start + "/changesByEntity/".count] = UInt8(ascii: "D")
        // The CRC of the last section, the extensions, made to match.
        Self.matchCRC(&bytes, ofLastSection: true)
        do throws(FormatError) {
            _ = try V2BinaryDecoder().decode(bytes)
            Issue.record("an extension of an entity without changes was read")
        } catch {
            #expect(error.code == .binaryInvalidValue)
            #expect(error.location.offset == start - 1, "the entry's first byte, its pointer's length")
        }
    }

    @Test(
        "an event written in pieces on several threads reads back as itself, every string once in its table",
        arguments: [5_000, 14_000])
    func writtenInPieces(lastEntity: Int) throws {
        let event = PiecedEvent.make(lastEntity: lastEntity)
        let bytes = try V2BinaryEncoder().encode(event)
        // The decoder refuses a table that is not sorted and unique, and changes out of order;
        // the event read back is compared through the JSON writer, which shares no code with it.
        let decoded = try V2BinaryDecoder().decode(bytes)
        #expect(try V2JSONEncoder().encode(decoded) == V2JSONEncoder().encode(event))
        var strings = Set([event.uniqueIdentifier, event.storeIdentifier] + event.revisionSet.stores)
        for change in event.objectChanges {
            strings.formUnion([change.entity, change.globalIdentifier] + change.dataFiles)
            for property in change.propertyChanges {
                strings.insert(property.name)
                switch property.value {
                case .attribute(.string(let text)), .attributeInDataFile(let text), .toOne(let text?): strings.insert(text)
                case .toMany(let added, let removed): strings.formUnion(added + removed)
                case .orderedToMany(let added, let removed, let moved): strings.formUnion(added + removed + moved.values)
                default: break
                }
            }
        }
        // The strings section comes first (Spec/v2-binary.md 5): type, flags, length and CRC-32,
        // then the number of strings.
        var offset = V2Binary.magic.count + 2
        func varint() -> UInt64 {
            var value: UInt64 = 0, shift: UInt64 = 0
            while offset < bytes.count {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { break }
                shift += 7
            }
            return value
        }
        #expect(varint() == 1 && varint() == 0)
        _ = varint()
        offset += 4
        #expect(varint() == UInt64(strings.count))
    }
}
