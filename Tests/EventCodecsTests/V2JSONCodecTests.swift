import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs

@Suite("v2 JSON codec")
struct V2JSONCodecTests {
    static func sampleEvent(revision: Int64 = 9_007_199_254_740_993) -> Event {
        let changes = [
            ObjectChange(
                entity: "Parent", globalIdentifier: "p1", type: .insert,
                propertyChanges: [
                    PropertyChange(name: "name", value: .attribute(.string("p1"))),
                    PropertyChange(name: "photo", value: .attributeInDataFile(filename: "F1")),
                    PropertyChange(name: "child", value: .toOne(relatedIdentifier: "c1")),
                    PropertyChange(name: "friends", value: .toMany(added: ["c2", "c1"], removed: [])),
                    PropertyChange(name: "ordered", value: .orderedToMany(added: ["c1"], removed: [], movedByIndex: [0: "c2", 1: "c1", 10: "c3"])),
                    PropertyChange(name: "big", value: .attribute(.integer(.max))),
                    PropertyChange(name: "small", value: .attribute(.integer(.min))),
                    PropertyChange(name: "ratio", value: .attribute(.double(1.0))),
                    PropertyChange(name: "nan", value: .attribute(.double(.nan))),
                    PropertyChange(name: "price", value: .attribute(.decimal("123456789012345678901234567890.5"))),
                    PropertyChange(name: "born", value: .attribute(.date(millisecondsSince1970: -86_400_000.5))),
                    PropertyChange(name: "blob", value: .attribute(.binary(Data([0, 1, 2, 255])))),
                    PropertyChange(name: "uuid", value: .attribute(.uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!))),
                    PropertyChange(name: "link", value: .attribute(.url("https://example.com/a?b=c"))),
                    PropertyChange(name: "nothing", value: .attribute(.null)),
                ], dataFiles: ["F1"]),
            ObjectChange(entity: "Child", globalIdentifier: "c1", type: .delete),
        ]
        return Event(
            uniqueIdentifier: "E1", type: .save, storeIdentifier: "STORE-A", revision: revision,
            globalCount: 9_007_199_254_740_995, timestamp: 627_318_123.456, modelVersion: "v1",
            otherStoreRevisions: ["STORE-B": 3], objectChanges: changes)
    }

    func roundTrip(_ event: Event) throws -> (Event, [UInt8]) {
        let bytes = try V2JSONEncoder().encode(event)
        let decoded = try V2JSONDecoder().decodeEvent(try JSONParser.parse(bytes)).event
        return (decoded, bytes)
    }

    @Test("every value kind survives a write and a read; writing again gives the same bytes")
    func roundTripAllKinds() throws {
        let event = Self.sampleEvent()
        let (decoded, bytes) = try roundTrip(event)
        #expect(decoded == event)
        #expect(try V2JSONEncoder().encode(decoded) == bytes)
    }

    @Test("a revision of 2^53 + 1 is written and read back exactly")
    func int64Revision() throws {
        let (decoded, bytes) = try roundTrip(Self.sampleEvent())
        #expect(decoded.revision == 9_007_199_254_740_993)
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""STORE-A":9007199254740993"#))
    }

    @Test("the canonical bytes of a small event, written out by hand")
    func canonicalBytes() throws {
        let event = Event(
            uniqueIdentifier: "u", type: .save, storeIdentifier: "S", revision: 2, globalCount: 7,
            timestamp: 10, otherStoreRevisions: ["R": 1],
            objectChanges: [
                ObjectChange(
                    entity: "b", globalIdentifier: "x", type: .update,
                    propertyChanges: [
                        PropertyChange(name: "v", value: .attribute(.double(2))),
                        PropertyChange(name: "d", value: .attribute(.date(millisecondsSince1970: 1000))),
                    ]),
                ObjectChange(entity: "A", globalIdentifier: "y", type: .delete),
            ])
        let expected =
            #"{"changesByEntity":{"A":[{"globalIdentifier":"y","type":300}],"b":[{"globalIdentifier":"x","properties":[{"propertyName":"d","type":0,"value":["date",1000]},{"propertyName":"v","type":0,"value":2.0}],"type":200}]},"globalCount":7,"revisionsByStoreIdentifier":{"R":1,"S":2},"storeIdentifier":"S","timestamp":"10.0","type":200,"uniqueIdentifier":"u"}"#
        #expect(String(decoding: try V2JSONEncoder().encode(event), as: UTF8.self) == expected)
    }

    @Test("integers and doubles stay apart: 3 is an integer, 3.0 a double")
    func integerVersusDouble() throws {
        let json = try JSONParser.parse(
            #"{"type":200,"uniqueIdentifier":"u","globalCount":0,"timestamp":"0","storeIdentifier":"S","revisionsByStoreIdentifier":{"S":0},"changesByEntity":{"E":[{"type":200,"globalIdentifier":"g","properties":[{"name":"i","type":0,"value":3},{"name":"d","type":0,"value":3.0}]}]}}"#
        )
        let event = try V2JSONDecoder().decodeEvent(json).event
        let values = event.objectChanges[0].propertyChanges.map(\.value)
        #expect(values == [.attribute(.double(3)), .attribute(.integer(3))])
    }

    @Test("unknown keys at every level are kept through a rewrite and listed by pointer")
    func unknownKeys() throws {
        let json = try JSONParser.parse(
            #"{"future":{"x":[1.50]},"type":200,"uniqueIdentifier":"u","globalCount":0,"timestamp":"0","storeIdentifier":"S","revisionsByStoreIdentifier":{"S":0},"changesByEntity":{"E":[{"type":200,"globalIdentifier":"g","colour":"red","properties":[{"name":"p","type":1,"relatedIdentifier":null,"weight":1e3}]}]}}"#
        )
        let (event, unknown) = try V2JSONDecoder().decodeEvent(json)
        #expect(unknown.map(\.description).sorted() == ["/changesByEntity/E/0/colour", "/changesByEntity/E/0/properties/0/weight", "/future"])
        let text = String(decoding: try V2JSONEncoder().encode(event), as: UTF8.self)
        #expect(text.contains(#""future":{"x":[1.50]}"#))
        #expect(text.contains(#""colour":"red""#))
        #expect(text.contains(#""weight":1e3"#))
    }

    @Test("an event over the per-file limit is split into parts that join back to the same event")
    func multipart() throws {
        let event = Self.sampleEvent()
        let parts = try V2JSONEncoder(maximumObjectChangesPerFile: 1).encodeParts(event)
        #expect(parts.count == 2)
        var decoded: [EventPart] = []
        for (i, bytes) in parts.enumerated() {
            let json = try JSONParser.parse(bytes)
            decoded.append(try V2JSONDecoder().decodePart(json, position: .part(index: i + 1, count: parts.count)))
        }
        #expect(try JSONParser.parse(parts[1]).objectValue?.keys == ["changesByEntity"])
        #expect(try V2JSONDecoder.join(decoded.reversed()) == event)
        #expect(throws: FormatError.self) { try V2JSONDecoder.join([decoded[1]]) }
        #expect(try V2JSONEncoder(maximumObjectChangesPerFile: 2).encodeParts(event).count == 1)
    }

    @Test("values the dialect cannot carry are refused when writing")
    func unencodable() {
        var event = Self.sampleEvent()
        event.objectChanges[0].propertyChanges = [PropertyChange(name: "d", value: .attribute(.date(millisecondsSince1970: .infinity)))]
        #expect(throws: FormatError.self) { try V2JSONEncoder().encode(event) }
        event.objectChanges[0].propertyChanges = [PropertyChange(name: "d", value: .attribute(.decimal("1,5")))]
        #expect(throws: FormatError.self) { try V2JSONEncoder().encode(event) }
    }
}
