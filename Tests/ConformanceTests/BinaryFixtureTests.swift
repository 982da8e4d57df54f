import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import CloudFolder
import TestSupport

/// The hand-computed examples of Spec/v2-binary.md and its invalid and non-canonical files.
@Suite("v2 binary fixtures")
struct BinaryFixtureTests {
    static func event(_ path: String) throws -> Event {
        let result = EventFileReader().decodePart(try Fixtures.bytes(path), position: .single, displayName: path)
        return try V2JSONDecoder.join([try #require(result.part, "\(result.errors)")])
    }

    @Test("each example encodes to exactly the bytes computed by hand, and decodes back", arguments: [1, 2, 3, 4, 5])
    func examples(number: Int) throws {
        let event = try Self.event("v2-binary/valid/example-\(number).json")
        let bytes = try Fixtures.bytes("v2-binary/valid/example-\(number).bin")
        #expect(try V2BinaryEncoder().encode(event) == bytes)
        #expect(try V2BinaryDecoder().decode(bytes) == event)
        #expect(BinaryNumberedDifferential.mismatch(bytes) == nil)
    }

    static let noncanonicalFiles = Fixtures.cases("v2-binary/noncanonical/cases.json").compactMap { $0["file"]?.stringValue }

    @Test("valid but not canonical files (deflate, unknown sections, higher minor) decode to their event", arguments: noncanonicalFiles)
    func noncanonical(file: String) throws {
        let testCase = try #require(Fixtures.cases("v2-binary/noncanonical/cases.json").first { $0["file"]?.stringValue == file })
        let event = try Self.event("v2-binary/noncanonical/\(testCase["json"]?.stringValue ?? "")")
        let bytes = try Fixtures.bytes("v2-binary/noncanonical/\(file)")
        #expect(try V2BinaryDecoder().decode(bytes) == event)
        #expect(BinaryNumberedDifferential.mismatch(bytes) == nil, "\(file)")
        if let canonical = testCase["canonicalBytes"]?.numberValue?.int64Value {
            #expect(Int64(try V2BinaryEncoder().encode(event).count) == canonical)
        }
    }

    /// The byte offsets of the sections of unknown type, by hand: section 9 of Spec/v2-binary.md
    /// 13.5 is at 0x5F; in the minor-7 file the 93 bytes of example 1 are followed by section 5
    /// (type 05, flags FF 01, length 02, CRC, 2 payload bytes: 10 bytes) and then section 200.
    static let unknownSections = ["deflated-and-unknown-section.bin": [95], "minor-7-unknown-flags.bin": [93, 103]]

    @Test("the decoder reports where a file has sections of unknown type, and only there", arguments: noncanonicalFiles)
    func unknownSectionOffsets(file: String) throws {
        let decoded = try V2BinaryDecoder().decodeReportingUnknowns(try Fixtures.bytes("v2-binary/noncanonical/\(file)"))
        #expect(decoded.unknownSectionOffsets == Self.unknownSections[file] ?? [])
    }

    @Test("the decoder reports the canonical JSON pointer of every unknown member it puts back")
    func unknownMembers() throws {
        let decoded = try V2BinaryDecoder().decodeReportingUnknowns(try Fixtures.bytes("v2-binary/valid/example-3.bin"))
        #expect(decoded.unknownMembers.map(\.description) == ["/changesByEntity/Gauge/0/properties/3/x-unit", "/x-origin"])
        #expect(decoded.unknownSectionOffsets.isEmpty)
    }

    static let invalidFiles = Fixtures.cases("v2-binary/invalid/cases.json").compactMap { $0["file"]?.stringValue }

    @Test("each invalid file is refused with its code at its byte offset", arguments: invalidFiles)
    func invalid(file: String) throws {
        let testCase = try #require(Fixtures.cases("v2-binary/invalid/cases.json").first { $0["file"]?.stringValue == file })
        let bytes = try Fixtures.bytes("v2-binary/invalid/\(file)")
        // A file named as a part is read in that role; the others by the binary decoder itself.
        let error: FormatError
        if let part = CloudFileName.parseEvent(file)?.part {
            let result = EventFileReader().decodePart(bytes, position: .part(index: part.index, count: part.count), displayName: file)
            error = try #require(result.errors.first)
        } else {
            do throws(FormatError) {
                _ = try V2BinaryDecoder().decode(bytes)
                Issue.record("\(file) decoded")
                return
            } catch let caught {
                error = caught
            }
            // The merge's numbered-only reading refuses it with the same error.
            #expect(BinaryNumberedDifferential.mismatch(bytes) == nil, "\(file)")
        }
        #expect(error.code.rawValue == testCase["code"]?.stringValue, "\(file): \(error)")
        if let offset = testCase["offset"]?.numberValue?.int64Value {
            #expect(error.location.offset.map(Int64.init) == offset, "\(file): \(error)")
        }
        // v2.* codes also name the value's place in the canonical JSON form (v2-binary.md 12.2).
        if error.code.rawValue.hasPrefix("v2.") {
            #expect(error.location.pointer?.description == testCase["pointer"]?.stringValue, "\(file): \(error)")
        }
    }

    static let blobFiles = Fixtures.cases("v2-binary/blobs/cases.json").compactMap { $0["file"]?.stringValue }

    @Test("each damaged blob container is refused with its code", arguments: blobFiles)
    func blob(file: String) throws {
        let testCase = try #require(Fixtures.cases("v2-binary/blobs/cases.json").first { $0["file"]?.stringValue == file })
        let bytes = try Fixtures.bytes("v2-binary/blobs/\(file)")
        do throws(FormatError) {
            _ = try DataBlob.content(of: bytes)
            Issue.record("\(file) was accepted")
        } catch {
            #expect(error.code.rawValue == testCase["code"]?.stringValue, "\(file): \(error)")
        }
    }

    @Test(
        "the folder reader checks a data file in chunks with the same verdict as the whole-file check", arguments: blobFiles + ["hello.container", "hello.raw"])
    func streamedBlob(file: String) throws {
        let bytes = try Fixtures.bytes("v2-binary/blobs/\(file)")
        let whole = Result { () throws(FormatError) in try DataBlob.content(of: bytes) }
        var streamed: [UInt8] = []
        let result = Result { () throws(FormatError) in
            try DataFileReader.check(at: Fixtures.url("v2-binary/blobs/\(file)")) { streamed.append(contentsOf: $0) }
        }
        switch (result, whole) {
        case (.success, .success(let expected)): #expect(streamed == expected, "\(file)")
        case (.failure(let a), .failure(let b)): #expect(a.code == b.code, "\(file)")
        default: Issue.record("\(file): streamed \(result), whole \(whole)")
        }
    }

    @Test("a container of several chunks streams to its content; damage anywhere is found", arguments: [nil, 10, 1_500_000, 3_000_000] as [Int?])
    func multiChunkContainer(damageAt: Int?) throws {
        let content = (0..<3_145_728).map { UInt8(truncatingIfNeeded: $0 % 251 ^ $0 >> 12) }
        for deflate in [false, true] {
            var container = DataBlob.container(content, deflate: deflate)
            if let damageAt { container[min(damageAt, container.count - 1)] ^= 0x40 }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("multi-chunk-\(deflate)-\(damageAt ?? -1)")
            try Data(container).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            var streamed: [UInt8] = []
            let result = Result { () throws(FormatError) in try DataFileReader.check(at: file) { streamed.append(contentsOf: $0) } }
            let whole = Result { () throws(FormatError) in try DataBlob.content(of: container) }
            switch (result, whole) {
            case (.success, .success(let expected)): #expect(streamed == expected && expected == content)
            case (.failure(let a), .failure(let b)): #expect(a.code == b.code)
            default: Issue.record("deflate \(deflate), damage at \(String(describing: damageAt)): streamed \(result), whole \(whole)")
            }
            #expect((damageAt == nil) == ((try? whole.get()) != nil))
        }
    }

    @Test("the intact containers give their content")
    func intactBlobs() throws {
        #expect(
            try DataBlob.content(of: try Fixtures.bytes("v2-binary/blobs/hello.container")) == Array("hello".utf8)
                || (try DataBlob.content(of: try Fixtures.bytes("v2-binary/blobs/hello.container"))) == (try Fixtures.bytes("v2-binary/blobs/hello.raw")))
        #expect(try DataBlob.content(of: try Fixtures.bytes("v2-binary/blobs/a1000.deflated.container")).count == 1000)
    }
}
