import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import CloudFolder
import TestSupport

/// The error codes Spec/README.md section 7 lists: every `a.b` name in backquotes in that section.
enum SpecErrorCodes {
    static let listed: Set<String> = {
        let url = Fixtures.root.deletingLastPathComponent().appendingPathComponent("Spec/README.md")
        let readme = String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self)
        guard let start = readme.range(of: "\n## 7. Error codes") else { return [] }
        let tail = readme[start.upperBound...]
        let body = tail.range(of: "\n## 8.").map { tail[..<$0.lowerBound] } ?? tail
        return Set(
            body.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.map { String($0.element) }
                .filter { $0.range(of: #"^[a-z0-9]+\.[a-zA-Z0-9-]+$"#, options: .regularExpression) != nil })
    }()
}

/// Every binary fixture, damaged systematically: each bit of the header and of a sample of the
/// body flipped, the same sample flipped again with the section's CRC-32 made to match (so the
/// damage reaches the decoder instead of stopping at `binary.checksum`), and (for small files) cut
/// at every position. Each result must be rejected as Spec/v2-binary.md section 12 says, or decode
/// to an event that section 10.1 and section 1 promise things about; nothing may crash.
@Suite("Binary bit flips and truncations")
struct BinaryMutationTests {
    static let files: [String] = ["valid", "noncanonical"].flatMap { folder in
        Fixtures.files(in: "v2-binary/\(folder)", suffix: ".bin").map { "v2-binary/\(folder)/\($0)" }
    }

    /// The codes a binary event reader reports (Spec/README.md section 7): the `binary.*` codes of
    /// 7.13, the `v2.*` codes 7.3 names for the binary reader (v2-binary.md 12.4), and the two of
    /// 7.5 that the binary reader reports for binary files.
    static let readerCodes: Set<String> = [
        "binary.unsupported-version", "binary.unknown-flag", "binary.duplicate-section", "binary.section-order",
        "binary.missing-section", "binary.overlong-varint", "binary.invalid-utf8", "binary.bad-index",
        "binary.too-large", "binary.inflate-ratio", "binary.truncated", "binary.bad-magic", "binary.checksum",
        "binary.inflate-failed", "binary.trailing-bytes", "binary.invalid-value",
        "v2.invalid-timestamp", "v2.missing-own-revision", "v2.invalid-decimal", "v2.number-out-of-range",
        "v2.integer-out-of-range", "v2.unknown-event-type", "v2.unknown-change-type",
    ]

    /// What happened to one damaged input.
    enum Outcome { case rejected, decoded }

    /// Checks the contract for one input; `what` names it in failure messages.
    @discardableResult
    static func check(_ bytes: [UInt8], _ what: @autoclosure () -> String) -> Outcome {
        // The merge's numbered-only reading: the same error, or the same header and numbered form.
        if let mismatch = BinaryNumberedDifferential.mismatch(bytes) { Issue.record("\(what()): \(mismatch)") }
        let event: Event
        do throws(FormatError) {
            event = try V2BinaryDecoder().decode(bytes)
        } catch {
            // Rejected: with a code the Spec lists for this reader, at a byte of the file (12.2:
            // the end of the input counts, for `binary.truncated` and `binary.missing-section`).
            #expect(readerCodes.contains(error.code.rawValue), "\(what()): \(error) is not a code of the binary reader")
            if let offset = error.location.offset {
                #expect((0...bytes.count).contains(offset), "\(what()): \(error) lies outside the \(bytes.count) bytes")
            } else {
                Issue.record("\(what()): \(error) has no offset")
            }
            // 12.2: `binary.*` errors have no pointer, `v2.*` ones the pointer into the canonical JSON form.
            if error.code.rawValue.hasPrefix("binary.") {
                #expect(error.location.pointer == nil, "\(what()): \(error) has a pointer")
            } else {
                #expect(error.location.pointer != nil, "\(what()): \(error) has no pointer")
            }
            return .rejected
        }
        do throws(FormatError) {
            // 10.1: the event has exactly one canonical encoding, which decodes to the same event
            // and encodes again to the same bytes.
            let canonical = try V2BinaryEncoder().encode(event)
            let reread = try V2BinaryDecoder().decode(canonical)
            #expect(reread == event, "\(what()): its canonical bytes decode to another event")
            #expect(try V2BinaryEncoder().encode(reread) == canonical, "\(what()): the canonical bytes are not stable")
            // Section 1: every accepted file decodes to an event that has a valid v2 JSON encoding;
            // 10.1: decoding that JSON and encoding binary gives the canonical binary bytes.
            let json = try V2JSONEncoder().encode(event)
            let result = EventFileReader().decodePart(json, position: .single, displayName: "\(what()).json")
            guard let part = result.part else {
                Issue.record("\(what()): its JSON form does not read back: \(result.errors)")
                return .decoded
            }
            let fromJSON = try V2JSONDecoder.join([part])
            #expect(fromJSON == event, "\(what()): its JSON form reads back as another event")
            #expect(try V2BinaryEncoder().encode(fromJSON) == canonical, "\(what()): JSON -> binary does not give the canonical bytes")
        } catch {
            Issue.record("\(what()) decoded, but then: \(error)")
        }
        return .decoded
    }

    /// The sections of a well-formed file (5.1): where each CRC and stored payload lie.
    static func sections(of bytes: [UInt8]) -> [(crc: Int, payload: Range<Int>)] {
        var result: [(crc: Int, payload: Range<Int>)] = []
        var position = 10
        func varint() -> Int? {
            var value = 0, shift = 0
            while position < bytes.count, shift < 63 {
                let byte = bytes[position]
                position += 1
                value |= Int(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        while position < bytes.count {
            guard varint() != nil, varint() != nil, let length = varint(), position + 4 + length <= bytes.count else { return [] }
            result.append((crc: position, payload: (position + 4)..<(position + 4 + length)))
            position += 4 + length
        }
        return result
    }

    /// CRC-32 of ISO-HDLC (5.3).
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    @Test("the CRC-32 helper gives the check value of Spec/v2-binary.md 5.3")
    func crcCheckValue() {
        #expect(Self.crc32(ArraySlice(Array("123456789".utf8))) == 0xCBF4_3926)
        #expect(Self.crc32([]) == 0)
    }

    @Test("the accepted codes are those Spec/README.md section 7 lists, and cover every binary.* code")
    func codesAreTheSpecs() throws {
        let listed = SpecErrorCodes.listed
        #expect(listed.count > 100, "Spec/README.md section 7 not found or not read")
        #expect(Self.readerCodes.subtracting(listed).isEmpty, "not in Spec/README.md section 7: \(Self.readerCodes.subtracting(listed).sorted())")
        let binaryCodes = listed.filter { $0.hasPrefix("binary.") }
        #expect(binaryCodes.count == 16)
        #expect(
            binaryCodes.subtracting(Self.readerCodes).isEmpty, "binary.* codes the test would refuse: \(binaryCodes.subtracting(Self.readerCodes).sorted())")
    }

    @Test("flipping bits and truncating never crashes", arguments: files)
    func mutations(file: String) throws {
        let original = try Fixtures.bytes(file)
        #expect(!original.isEmpty)
        #expect(Self.check(original, file) == .decoded)
        var random = SplitMix64(seed: UInt64(original.count))
        let headerBits = min(original.count, 16) * 8
        var positions = Array(0..<headerBits)
        for _ in 0..<400 { positions.append(Int.random(in: 0..<(original.count * 8), using: &random)) }
        for bit in positions {
            var bytes = original
            bytes[bit / 8] ^= UInt8(1 << (bit % 8))
            Self.check(bytes, "\(file) with bit \(bit) flipped")
        }
        // The same damage behind a matching CRC: it reaches the decoder.
        let sections = Self.sections(of: original)
        #expect(!sections.isEmpty, "\(file): its frames do not parse")
        var decoded = 0, rejected = 0
        for section in sections where !section.payload.isEmpty {
            for _ in 0..<200 {
                let bit = Int.random(in: (section.payload.lowerBound * 8)..<(section.payload.upperBound * 8), using: &random)
                var bytes = original
                bytes[bit / 8] ^= UInt8(1 << (bit % 8))
                let crc = Self.crc32(bytes[section.payload])
                for index in 0..<4 { bytes[section.crc + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
                switch Self.check(bytes, "\(file) with bit \(bit) flipped and its CRC fixed") {
                case .decoded: decoded += 1
                case .rejected: rejected += 1
                }
            }
        }
        // Both branches of the contract were exercised.
        #expect(decoded > 0 && rejected > 0, "\(file): \(decoded) decoded, \(rejected) rejected")
        if original.count <= 4_096 {
            for length in 0..<original.count { Self.check(Array(original.prefix(length)), "\(file) cut to \(length) bytes") }
        }
    }
}
