import Foundation
import Testing
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import CloudFolder

/// Paths in the manifests are relative to the package root.
private let packageRoot = Fixtures.root.deletingLastPathComponent()
private func atRoot(_ path: String) -> URL { packageRoot.appendingPathComponent(path) }

private func loadModel(_ path: String) throws -> DataModel { try ModelBundle(path: atRoot(path).path).load() }

/// Every regular file below `url`, as sorted relative paths.
private func files(below url: URL) -> [String] {
    let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
    var result: [String] = []
    while let item = enumerator?.nextObject() as? URL {
        if (try? item.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
            result.append(String(item.standardizedFileURL.path.dropFirst(url.standardizedFileURL.path.count + 1)))
        }
    }
    return result.sorted()
}

@Suite("Model fixtures")
struct ModelFixtureTests {
    @Test(
        "each model's description has the hand-derived canonical bytes and hash",
        arguments: [
            ("Fixtures/models/Inheritance.xcdatamodeld", nil, "Inheritance"),
            ("Fixtures/models/Inheritance.xcdatamodeld", "Inheritance_1", "Inheritance_1"),
            ("Fixtures/models/Single.xcdatamodeld", nil, "Single"),
            ("Fixtures/external/ensembles-1x/models/CDEStoreModificationEventTestsModel.xcdatamodeld", nil, "CDEStoreModificationEventTestsModel"),
        ] as [(String, String?, String)])
    func description(path: String, version: String?, expected: String) throws {
        let model = try ModelBundle(path: atRoot(path).path).load(version: version)
        let bytes = try Fixtures.bytes("models/expected/\(expected).description.json")
        #expect(String(decoding: JSONWriter().bytes(model.descriptionDocument), as: UTF8.self) == String(decoding: bytes, as: UTF8.self))
        let hash = try Fixtures.json("models/expected/\(expected).hash.json")[JSONPointer(["modelHash"])]
        #expect(hash == .string(model.modelHash))
    }

    static let brokenCases = Fixtures.cases("models/broken/cases.json").compactMap { $0["path"]?.stringValue }

    @Test("each broken model is refused with its code (and line, where given)", arguments: brokenCases)
    func broken(path: String) throws {
        let testCase = try #require(Fixtures.cases("models/broken/cases.json").first { $0["path"]?.stringValue == path })
        do throws(FormatError) {
            _ = try ModelBundle(path: Fixtures.url("models/broken/\(path)").path).load()
            Issue.record("\(path) loaded")
        } catch {
            #expect(error.code.rawValue == testCase["code"]?.stringValue, "\(path): \(error)")
            // The parser's lines of xml-syntax differ between parsers; those of the check made
            // before parsing (model.md 3.1) do not.
            let checkedBeforeParsing = testCase["rule"]?.stringValue == "model.md 3.1"
            if let line = testCase["line"]?.numberValue?.int64Value, error.code != .dataModelXMLSyntax || checkedBeforeParsing {
                #expect(error.location.line.map(Int64.init) == line, "\(path): \(error)")
            }
        }
    }
}

@Suite("v1 fixtures")
final class V1FixtureTests {
    /// Scratch space of one test; a new instance runs each test, and removes it afterwards.
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("fixtures-\(UUID().uuidString)")

    init() throws { try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true) }

    deinit { try? FileManager.default.removeItem(at: root) }

    static let validCases = Fixtures.cases("v1-json/valid/cases.json").compactMap { $0["file"]?.stringValue }
    static let invalidCases = Fixtures.cases("v1-json/invalid/cases.json").compactMap { $0["file"]?.stringValue }
    static let refusedCases = Fixtures.cases("v1-json/convert-refused/cases.json").compactMap { $0["file"]?.stringValue }
    static let model = "Fixtures/models/Inheritance.xcdatamodeld"

    func convert(_ source: URL, to target: TargetDialect, lenient: Bool, model: String) throws -> (URL, Result<ConversionSummary, ConversionFailure>) {
        let destination = root.appendingPathComponent(UUID().uuidString).appendingPathComponent("out")
        try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        let converter = Converter(reader: EventFileReader(lenient: lenient, model: try loadModel(model)), target: target)
        do throws(ConversionFailure) {
            return (destination, .success(try converter.convert(source: source.path, destination: destination.path)))
        } catch {
            return (destination, .failure(error))
        }
    }

    /// The produced files, byte for byte, against the expected folder.
    func compare(_ produced: URL, expected: URL, kind: String, names: [String]) throws {
        if kind == "event" {
            let name = try #require(names.first)
            #expect(try Data(contentsOf: produced) == Data(contentsOf: expected.appendingPathComponent(name)))
            return
        }
        #expect(files(below: produced) == names.sorted())
        for name in names {
            #expect(try Data(contentsOf: produced.appendingPathComponent(name)) == Data(contentsOf: expected.appendingPathComponent(name)), "\(name)")
        }
    }

    @Test("each valid v1 file converts to exactly the expected v2 files, and to the expected canonical v1", arguments: validCases)
    func valid(file: String) throws {
        let testCase = try #require(Fixtures.cases("v1-json/valid/cases.json").first { $0["file"]?.stringValue == file })
        let kind = testCase["kind"]?.stringValue ?? "event"
        let lenient = testCase["lenient"] == .bool(true)
        let source = Fixtures.url("v1-json/valid/\(file)")
        let (v2, v2Result) = try convert(source, to: .v2, lenient: lenient, model: Self.model)
        let summary = try v2Result.get()
        #expect(summary.movedToDataFiles == Int(testCase["movedToDataFiles"]?.numberValue?.int64Value ?? -1))
        try compare(
            v2, expected: Fixtures.url("v1-json/valid/\(testCase["expected"]?.stringValue ?? "")"), kind: kind,
            names: testCase["files"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        let (v1, v1Result) = try convert(source, to: .v1, lenient: lenient, model: Self.model)
        _ = try v1Result.get()
        try compare(
            v1, expected: Fixtures.url("v1-json/valid/\(testCase["expectedV1"]?.stringValue ?? "")"), kind: kind,
            names: testCase["filesV1"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    @Test("v1 -> v2 -> v1 is lossless: the expected v2 output converts back to the expected v1 output", arguments: validCases)
    func backToV1(file: String) throws {
        let testCase = try #require(Fixtures.cases("v1-json/valid/cases.json").first { $0["file"]?.stringValue == file })
        // Moved blobs come back as data-file references, not inline bytes: same content, other form.
        guard testCase["movedToDataFiles"]?.numberValue?.int64Value == 0 else { return }
        let kind = testCase["kind"]?.stringValue ?? "event"
        var source = Fixtures.url("v1-json/valid/\(testCase["expected"]?.stringValue ?? "")")
        if kind == "event" { source.appendPathComponent(testCase["files"]?.arrayValue?.first?.stringValue ?? "") }
        let (v1, result) = try convert(source, to: .v1, lenient: false, model: Self.model)
        _ = try result.get()
        try compare(
            v1, expected: Fixtures.url("v1-json/valid/\(testCase["expectedV1"]?.stringValue ?? "")"), kind: kind,
            names: testCase["filesV1"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    @Test("each invalid v1 file is refused with its code and pointer", arguments: invalidCases)
    func invalid(file: String) throws {
        let testCase = try #require(Fixtures.cases("v1-json/invalid/cases.json").first { $0["file"]?.stringValue == file })
        let reader = EventFileReader(lenient: testCase["lenient"] == .bool(true), model: try loadModel(Self.model))
        let result = reader.readFile(at: Fixtures.url("v1-json/invalid/\(file)"), displayName: file)
        let code = testCase["code"]?.stringValue, pointer = testCase["pointer"]?.stringValue
        let offset = testCase["offset"]?.numberValue?.int64Value
        #expect(result.events.isEmpty)
        #expect(
            result.errors.contains { error in
                error.code.rawValue == code && (pointer == nil || error.location.pointer?.description == pointer)
                    && (offset == nil || error.location.offset.map(Int64.init) == offset)
            }, "\(file): expected \(code ?? "-") at \(pointer ?? "-"), got \(result.errors)")
    }

    @Test("each refused conversion fails with its code and source pointer, writing nothing", arguments: refusedCases)
    func refused(file: String) throws {
        let testCase = try #require(Fixtures.cases("v1-json/convert-refused/cases.json").first { $0["file"]?.stringValue == file })
        let (destination, result) = try convert(Fixtures.url("v1-json/convert-refused/\(file)"), to: .v2, lenient: false, model: Self.model)
        guard case .failure(let failure) = result else {
            Issue.record("\(file) converted")
            return
        }
        #expect(
            failure.errors.contains {
                $0.code.rawValue == testCase["code"]?.stringValue && $0.location.pointer?.description == testCase["pointer"]?.stringValue
            },
            "\(file): \(failure.errors)")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination.deletingLastPathComponent().path).isEmpty)
    }

    static let originals = (try? Fixtures.json("v1-json/originals.json"))?[JSONPointer(["originals"])]?.arrayValue ?? []

    @Test("each original 1.x log converts to exactly the expected v2 events", arguments: originals.indices)
    func original(index: Int) throws {
        let original = Self.originals[index]
        let file = try #require(original["file"]?.stringValue)
        let model = try #require((try Fixtures.json("v1-json/originals.json"))[JSONPointer(["model"])]?.stringValue)
        let (destination, result) = try convert(atRoot(file), to: .v2, lenient: true, model: model)
        _ = try result.get()
        let expected = Fixtures.url("v1-json/\(original["expected"]?.stringValue ?? "")")
        let names = original["eventFiles"]?.arrayValue?.compactMap(\.stringValue).map { "events/\($0)" } ?? []
        #expect(names.count == Int(original["events"]?.numberValue?.int64Value ?? -1))
        try compare(destination, expected: expected, kind: "log", names: names)
    }
}

@Suite("Model validation fixtures")
struct ModelValidationFixtureTests {
    static let cases = Fixtures.cases("v2-json/model-invalid/cases.json").compactMap { $0["file"]?.stringValue }

    @Test("each v2 event that breaks the model is refused with its code and pointer", arguments: cases)
    func invalid(file: String) throws {
        let manifest = try Fixtures.json("v2-json/model-invalid/cases.json")
        let testCase = try #require(manifest[JSONPointer(["cases"])]?.arrayValue?.first { $0["file"]?.stringValue == file })
        let model = try loadModel(manifest[JSONPointer(["model"])]?.stringValue ?? "")
        let result = EventFileReader(model: model).readFile(at: Fixtures.url("v2-json/model-invalid/\(file)"), displayName: file)
        #expect(result.events.isEmpty)
        #expect(
            result.errors.contains {
                $0.code.rawValue == testCase["code"]?.stringValue && $0.location.pointer?.description == testCase["pointer"]?.stringValue
            },
            "\(file): \(result.errors)")
    }
}
