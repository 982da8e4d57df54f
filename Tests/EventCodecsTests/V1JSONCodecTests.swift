import Foundation
import Testing
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs

/// The original framework's test logs and the model they were written for.
enum OriginalLogs {
    static let external = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/external/ensembles-1x")

    static let folder = external.appendingPathComponent("Integrator Test Fixtures")

    static var files: [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        var result: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.hasSuffix(".json") { result.append(path) }
        }
        return result.sorted()
    }

    static func model() throws -> DataModel {
        try ModelBundle(path: external.appendingPathComponent("models/CDEStoreModificationEventTestsModel.xcdatamodeld").path).load()
    }

    static func parse(_ file: String) throws -> JSONValue {
        try JSONParser.parse(try Data(contentsOf: folder.appendingPathComponent(file)), options: .lenient)
    }
}

@Suite("v1 JSON codec")
struct V1JSONCodecTests {
    @Test("there are the original logs to test with")
    func originalsPresent() {
        #expect(OriginalLogs.files.count >= 11)
    }

    @Test("each original log reads with the test model, and v1 -> v2 -> v1 gives the same events", arguments: OriginalLogs.files)
    func originalRoundTrip(file: String) throws {
        let model = try OriginalLogs.model()
        let document = try V1JSONDecoder(model: model).decode(try OriginalLogs.parse(file))
        #expect(document.isLog)
        #expect(!document.events.isEmpty)
        for event in document.events {
            let v2 = try V2JSONDecoder().decodeEvent(try JSONParser.parse(try V2JSONEncoder().encode(event))).event
            #expect(v2 == event)
        }
        let v1Bytes = try V1JSONEncoder().encode(document.events, asLog: true)
        let again = try V1JSONDecoder(model: model).decode(try JSONParser.parse(v1Bytes))
        #expect(again.events == document.events)
        #expect(try V1JSONEncoder().encode(again.events, asLog: true) == v1Bytes)
    }

    @Test("strict parsing refuses the original logs' trailing commas and names the lenient option")
    func strictNamesLenient() throws {
        let data = try Data(contentsOf: OriginalLogs.folder.appendingPathComponent("BasicIntegratorRelationshipTestsFixture.json"))
        do {
            _ = try JSONParser.parse(data)
            Issue.record("a trailing comma was accepted in strict mode")
        } catch {
            #expect(error.code == .jsonTrailingComma)
            #expect(error.message.contains("--lenient"))
        }
    }

    @Test(
        "v1 dates are seconds since 2001, converted exactly to milliseconds since 1970",
        arguments: [
            ("58472395723.0", 59_450_702_923_000.0), ("10.0", 978_307_210_000.0), ("-1.5", 978_307_198_500.0),
            ("0.001", 978_307_200_001.0),
        ])
    func dates(seconds: String, milliseconds: Double) throws {
        let model = try OriginalLogs.model()
        let json = try JSONParser.parse(
            #"{"store":"S","revision":0,"timestamp":1,"changes":[{"entity":"Parent","id":"p","type":"update","properties":{"date":\#(seconds)}}]}"#)
        let event = try #require(try V1JSONDecoder(model: model).decode(json).events.first)
        #expect(event.objectChanges.first?.propertyChanges.first?.value == .attribute(.date(millisecondsSince1970: milliseconds)))
        let written = String(decoding: try V1JSONEncoder().encode([event], asLog: false), as: UTF8.self)
        #expect(written.contains(#""date":\#(seconds)"#))
    }

    @Test(
        "values that do not fit the model are refused with a pointer into the v1 document",
        arguments: [
            (#"{"name":5}"#, "model.wrong-value-type", "/0/changes/0/properties/name"),
            (#"{"invalidatingAttribute":32768}"#, "model.integer-out-of-range", "/0/changes/0/properties/invalidatingAttribute"),
            (#"{"friends":"c1"}"#, "model.wrong-kind", "/0/changes/0/properties/friends"),
            (#"{"colour":"red"}"#, "model.unknown-property", "/0/changes/0/properties/colour"),
            (#"{"child":{"add":[]}}"#, "model.wrong-kind", "/0/changes/0/properties/child"),
            (#"{"friends":{"add":["a"],"moved":{"0":"a"}}}"#, "model.wrong-kind", "/0/changes/0/properties/friends/moved"),
        ])
    func modelViolations(properties: String, code: String, pointer: String) throws {
        let json = try JSONParser.parse(
            #"[{"store":"S","revision":0,"timestamp":1,"changes":[{"entity":"Parent","id":"p","type":"insert","properties":\#(properties)}]}]"#)
        let model = try OriginalLogs.model()
        do throws(FormatError) {
            _ = try V1JSONDecoder(model: model).decode(json)
            Issue.record("accepted \(properties)")
        } catch {
            #expect(error.code.rawValue == code)
            #expect(error.location.pointer?.description == pointer)
        }
    }

    @Test("our optional keys are read, and written only when they differ from their defaults")
    func optionalKeys() throws {
        let model = try OriginalLogs.model()
        let text =
            #"{"store":"S","revision":2,"globalCount":5,"timestamp":1.5,"otherstores":[{"store":"R","revision":1}],"type":"merge","uniqueIdentifier":"U","modelVersion":"M","x-extra":[1.50],"changes":[{"entity":"Parent","id":"p","type":"update","dataFiles":["F"],"properties":{"data":{"dataFile":"F"},"orderedChildren":{"add":["c"],"moved":{"0":"c"}}}}]}"#
        let event = try #require(try V1JSONDecoder(model: model).decode(try JSONParser.parse(text)).events.first)
        #expect(event.type == .merge && event.uniqueIdentifier == "U" && event.modelVersion == "M")
        #expect(event.revisionSet == RevisionSet(["S": 2, "R": 1]))
        #expect(event.unknownFields["x-extra"] != nil)
        let written = String(decoding: try V1JSONEncoder().encode([event], asLog: false), as: UTF8.self)
        #expect(
            written
                == #"{"changes":[{"dataFiles":["F"],"entity":"Parent","id":"p","properties":{"data":{"dataFile":"F"},"orderedChildren":{"add":["c"],"moved":{"0":"c"},"remove":[]}},"type":"update"}],"globalCount":5,"modelVersion":"M","otherstores":[{"revision":1,"store":"R"}],"revision":2,"store":"S","timestamp":1.5,"type":"merge","uniqueIdentifier":"U","x-extra":[1.50]}"#
        )
        var plain = event
        plain.uniqueIdentifier = "S-2-5"
        plain.type = .save
        let defaults = String(decoding: try V1JSONEncoder().encode([plain], asLog: false), as: UTF8.self)
        #expect(!defaults.contains("uniqueIdentifier") && !defaults.contains(#""type":"save""#))
    }

    @Test("a property change with unknown members cannot be written as v1")
    func lossyProperty() throws {
        var event = V2JSONCodecTests.sampleEvent()
        event.objectChanges[1].propertyChanges[0].unknownFields = JSONObject([("weight", .null)])
        #expect(throws: FormatError.self) { try V1JSONEncoder().encode([event], asLog: false) }
    }
}
