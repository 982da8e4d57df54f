import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import CloudFolder
import TestSupport

@Suite("v2 binary encoding")
struct BinaryTests {
    static let validFiles = Fixtures.files(in: "v2-json/valid", suffix: ".json")

    static func event(_ file: String) throws -> Event {
        let result = EventFileReader().decodePart(try Fixtures.bytes("v2-json/valid/\(file)"), position: .single, displayName: file)
        return try V2JSONDecoder.join([try #require(result.part)])
    }

    @Test("JSON -> binary -> JSON gives the same event and the same canonical JSON; binary -> JSON -> binary the same bytes", arguments: validFiles)
    func lossless(file: String) throws {
        let event = try Self.event(file)
        let binary = try V2BinaryEncoder().encode(event)
        #expect(V2Binary.isBinary(binary))
        let decoded = try V2BinaryDecoder().decode(binary)
        #expect(decoded == event)
        #expect(try V2JSONEncoder().encode(decoded) == (try V2JSONEncoder().encode(event)))
        let again = try V2JSONDecoder().decodeEvent(try JSONParser.parse(try V2JSONEncoder().encode(decoded))).event
        #expect(try V2BinaryEncoder().encode(again) == binary)
        // Deflated sections are valid too, and decode to the same event.
        #expect(try V2BinaryDecoder().decode(try V2BinaryEncoder(deflateSections: true).encode(event)) == event)
    }

    @Test("the binary form is smaller than the canonical JSON for events with repeated identifiers")
    func smaller() throws {
        let event = try Self.event("03-relationships.json")
        #expect(try V2BinaryEncoder().encode(event).count < (try V2JSONEncoder().encode(event)).count)
    }

    @Test("damage is found: a flipped byte fails its checksum, an overlong varint and a truncated file are named")
    func damage() throws {
        let binary = try V2BinaryEncoder().encode(try Self.event("01-attribute-kinds.json"))
        var flipped = binary
        flipped[flipped.count - 1] ^= 0x01
        #expect(throws: FormatError.self) { try V2BinaryDecoder().decode(flipped) }
        do throws(FormatError) {
            _ = try V2BinaryDecoder().decode(flipped)
        } catch {
            #expect(error.code == .binaryChecksum)
        }
        do throws(FormatError) {
            _ = try V2BinaryDecoder().decode(Array(binary.prefix(binary.count - 3)))
        } catch {
            #expect(error.code == .binaryTruncated)
        }
        var overlong = Array(binary.prefix(10))
        overlong += [0x81, 0x00]  // section type 1 written in two bytes
        do throws(FormatError) {
            _ = try V2BinaryDecoder().decode(overlong)
        } catch {
            #expect(error.code == .binaryOverlongVarint)
            #expect(error.location.offset == 10)
        }
        var version = binary
        version[8] = 2
        do throws(FormatError) {
            _ = try V2BinaryDecoder().decode(version)
        } catch {
            #expect(error.code == .binaryUnsupportedVersion)
        }
    }

    @Test("a section of unknown type is skipped")
    func unknownSection() throws {
        let event = try Self.event("02-int64-extremes.json")
        var binary = try V2BinaryEncoder().encode(event)
        let payload: [UInt8] = [1, 2, 3]
        binary += [0x09, 0x00, 0x03]
        let crc = Zlib_crc32(payload)
        binary += [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)] + payload
        #expect(try V2BinaryDecoder().decode(binary) == event)
    }

    @Test("500 mutations of binary events are read or rejected, never crash")
    func hostile() throws {
        var random = SplitMix64(seed: 7)
        let samples = try Self.validFiles.map { try V2BinaryEncoder(deflateSections: $0.hasPrefix("0")).encode(try Self.event($0)) }
        for _ in 0..<500 {
            var bytes = samples.randomElement(using: &random) ?? []
            for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[position] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.removeSubrange(position...)
                default: bytes.insert(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF, 0x7F], at: position)
                }
            }
            _ = try? V2BinaryDecoder().decode(bytes)
        }
    }
}

/// CRC-32 (IEEE 802.3), computed here by the bitwise definition as an independent check.
func Zlib_crc32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}
