import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import TestSupport

/// `V2JSONEncoder.encode(_:pieceBytes:emit:)` writes an event without building its JSON value
/// (a rebase's baseline, Spec/merge.md 13.7); its pieces, put together, must be exactly the
/// bytes of `encode(_:)`, which writes the JSON value with `JSONWriter` (Spec/v2-json.md 6).
@Suite("Events written in pieces: the same bytes as through their JSON value")
struct StreamingEncoderTests {
    static func pieces(_ event: Event, pieceBytes: Int) throws(FormatError) -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        try V2JSONEncoder().encode(event, pieceBytes: pieceBytes) { (piece) throws(FormatError) in pieces.append(piece) }
        return pieces
    }

    /// The members whose order a writer can get wrong: entities and stores out of UTF-8 order
    /// (an uppercase, a non-ASCII and an escaped name), an ordered relationship with indexes 2
    /// and 10 (string order puts "10" first), unsorted and repeated identifiers and data files,
    /// every property kind, an object without properties.
    static var tricky: Event {
        let ordered = Dictionary(uniqueKeysWithValues: (0..<12).map { ($0, "m\(11 - $0)") })
        let changes = [
            ObjectChange(
                entity: "zeta", globalIdentifier: "z\"1", type: .insert,
                propertyChanges: [
                    PropertyChange(name: "é", value: .attribute(.string("tab\t"))),
                    PropertyChange(name: "Z", value: .attributeInDataFile(filename: "F2")),
                    PropertyChange(name: "a", value: .attributeInDataFile(filename: "F1")),
                    PropertyChange(name: "many", value: .toMany(added: ["c", "a", "b", "a"], removed: ["y", "x"])),
                    PropertyChange(name: "order", value: .orderedToMany(added: ["m3", "m1"], removed: ["q"], movedByIndex: ordered)),
                    PropertyChange(name: "one", value: .toOne(relatedIdentifier: nil)),
                    PropertyChange(name: "two", value: .toOne(relatedIdentifier: "t")),
                    PropertyChange(name: "when", value: .attribute(.date(millisecondsSince1970: 1.5))),
                ], dataFiles: ["F2", "F1", "F2"]),
            ObjectChange(entity: "Alpha", globalIdentifier: "a2", type: .update),
            ObjectChange(entity: "Ämter", globalIdentifier: "ä", type: .delete),
            ObjectChange(entity: "Alpha", globalIdentifier: "a1", type: .insert, propertyChanges: [PropertyChange(name: "n", value: .attribute(.null))]),
            ObjectChange(entity: "a\nb", globalIdentifier: "x", type: .insert),
        ]
        return Event(
            uniqueIdentifier: "U-1", type: .baseline, storeIdentifier: "b", revision: 4, globalCount: 12, timestamp: 0.1 + 0.2,
            otherStoreRevisions: ["B": 1, "é": 2, "a": 3], objectChanges: changes)
    }

    static var events: [(String, Event)] {
        var events = [("tricky", tricky), ("written in pieces", PiecedEvent.make())]
        var withModel = tricky
        withModel.modelVersion = "hash \u{1}"
        events.append(("tricky with a model version", withModel))
        var empty = tricky
        empty.objectChanges = []
        events.append(("no object changes", empty))
        var unknown = tricky
        unknown.unknownFields["extra"] = .bool(true)
        events.append(("an unknown member (the JSON value's path)", unknown))
        for file in FixtureDocuments.files() {
            if let event = try? V2JSONDecoder().decodeEvent(file.value).event { events.append((file.name, event)) }
        }
        return events
    }

    @Test("every v2 event of Fixtures/ and hand-made ones, in pieces of 1 byte, 100 bytes and the default")
    func sameBytes() throws {
        let events = Self.events
        #expect(events.count > 30)
        for (name, event) in events {
            let expected = try V2JSONEncoder().encode(event)
            for pieceBytes in [1, 100, 1 << 20] {
                let pieces = try Self.pieces(event, pieceBytes: pieceBytes)
                let written = pieces.flatMap { $0 }
                #expect(
                    written == expected,
                    "\(name), pieces of \(pieceBytes): \(String(decoding: written, as: UTF8.self)) against \(String(decoding: expected, as: UTF8.self))")
                if pieceBytes == 100 && expected.count > 400 && event.unknownFields.isEmpty { #expect(pieces.count > 1, "\(name) was not written in pieces") }
            }
        }
    }

    @Test("a value the v2 dialect cannot write stops the writer with the encoder's code")
    func unencodable() throws {
        var event = Self.tricky
        event.objectChanges[0].propertyChanges.append(PropertyChange(name: "bad", value: .attribute(.decimal("1e5x"))))
        #expect(throws: FormatError.self) { try V2JSONEncoder().encode(event) }
        do {
            _ = try Self.pieces(event, pieceBytes: 100)
            Issue.record("the writer wrote a decimal that is not decimal text")
        } catch {
            #expect(error.code == .v2UnencodableValue)
        }
    }
}
