import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import CloudFolder

@Suite("v2 JSON fixtures")
struct V2JSONFixtureTests {
    static let validFiles = Fixtures.files(in: "v2-json/valid", suffix: ".json")
    static let canonicalNames = Fixtures.files(in: "v2-json/canonical", suffix: ".input.json").map { String($0.dropLast(".input.json".count)) }
    static let invalidCases = Fixtures.cases("v2-json/invalid/cases.json")
    static let invalidFiles = invalidCases.compactMap { $0["file"]?.stringValue }

    func read(_ path: String, position: EventPartPosition = .single) -> EventFileReader.PartResult {
        let bytes = (try? Fixtures.bytes(path)) ?? []
        return EventFileReader().decodePart(bytes, position: position, displayName: path)
    }

    @Test("the fixture folders are present")
    func fixturesPresent() {
        #expect(Self.validFiles.count >= 10)
        #expect(Self.canonicalNames.count >= 3)
        #expect(Self.invalidCases.count >= 20)
    }

    @Test(
        "each valid event reads; read, write, read gives an equal event; writing twice gives identical bytes",
        arguments: validFiles)
    func validRoundTrip(file: String) throws {
        let result = read("v2-json/valid/\(file)")
        #expect(result.errors.isEmpty, "\(result.errors)")
        let part = try #require(result.part)
        let event = try V2JSONDecoder.join([part])
        let bytes = try V2JSONEncoder().encode(event)
        let reread = try V2JSONDecoder().decodeEvent(try JSONParser.parse(bytes)).event
        #expect(reread == event)
        #expect(try V2JSONEncoder().encode(reread) == bytes)
    }

    @Test("canonical output matches the bytes written out by hand", arguments: canonicalNames)
    func canonical(name: String) throws {
        let result = read("v2-json/canonical/\(name).input.json")
        #expect(result.errors.isEmpty, "\(result.errors)")
        let event = try V2JSONDecoder.join([try #require(result.part)])
        let expected = try Fixtures.bytes("v2-json/canonical/\(name).expected.json")
        let actual = try V2JSONEncoder().encode(event)
        #expect(String(decoding: actual, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    @Test("a two-part event joins into the expected event")
    func multipart() throws {
        let names = Fixtures.files(in: "v2-json/multipart", suffix: ".cdeevent")
        #expect(names.count == 2)
        var parts: [EventPart] = []
        for name in names {
            let parsed = try #require(CloudFileName.parseEvent(name)?.part)
            let result = read("v2-json/multipart/\(name)", position: .part(index: parsed.index, count: parsed.count))
            #expect(result.errors.isEmpty, "\(result.errors)")
            parts.append(try #require(result.part))
        }
        let joined = try V2JSONDecoder.join(parts)
        let expectedResult = read("v2-json/multipart/expected-joined.json")
        let expected = try V2JSONDecoder.join([try #require(expectedResult.part)])
        #expect(joined == expected)
        #expect(throws: FormatError.self) { try V2JSONDecoder.join(Array(parts.dropFirst())) }
    }

    /// One error's contract fields, as `cases.json` writes them (`null` there is `nil` here).
    struct Reported: Equatable, CustomStringConvertible {
        var code: String
        var pointer: String?
        var offset: Int64?
        var description: String { "\(code) at \(pointer.map { "\"\($0)\"" } ?? "-"), offset \(offset.map(String.init) ?? "-")" }
    }

    static func reported(_ error: FormatError) -> Reported {
        Reported(
            code: error.code.rawValue, pointer: error.location.pointer?.description,
            offset: error.location.offset.map(Int64.init))
    }

    @Test("each invalid file is refused, and its first error is the case's code, pointer and offset", arguments: invalidFiles)
    func invalid(file: String) throws {
        let testCase = try #require(Self.invalidCases.first { $0["file"]?.stringValue == file })
        let expected = Reported(
            code: try #require(testCase["code"]?.stringValue),
            pointer: testCase["pointer"]?.stringValue,
            offset: testCase["offset"]?.numberValue?.int64Value)
        // `part`: [index, count] reads the file in that role instead of as a single file.
        let part = testCase["part"]?.arrayValue?.compactMap { $0.numberValue?.int64Value }.map(Int.init)
        let position: EventPartPosition = part.map { $0.count == 2 ? .part(index: $0[0], count: $0[1]) : .single } ?? .single
        let result = read("v2-json/invalid/\(file)", position: position)
        #expect(result.part == nil, "\(file) was read")
        let first = try #require(result.errors.first, "\(file): no error reported")
        // Fixtures/README.md: compare the first error's code, pointer and offset with the case.
        #expect(Self.reported(first) == expected, "\(file): the first error is \(first), expected \(expected)")
        // Each file has exactly one problem: every stage but the schema stops at its first error,
        // and the schema's errors are one (code, pointer) pair once duplicates are removed.
        let distinct = result.errors.map(Self.reported).reduce(into: [Reported]()) { if !$0.contains($1) { $0.append($1) } }
        #expect(distinct == [expected], "\(file): \(result.errors)")
        #expect(result.errors.allSatisfy { $0.location.file == "v2-json/invalid/\(file)" })
    }
}
