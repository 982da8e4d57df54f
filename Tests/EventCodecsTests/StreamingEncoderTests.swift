import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import TestSupport

/// `V2JSONEncoder.encode(header:changes:pieceBytes:emit:)` writes an event as its changes are
/// made, without building its JSON value (a rebase's baseline, Spec/merge.md 13.7); its pieces,
/// put together, must be exactly the bytes of `encode(_:)`, which writes the JSON value with
/// `JSONWriter` (Spec/v2-json.md 6).
@Suite("Events written in pieces: the same bytes as through their JSON value")
struct StreamingEncoderTests {
    /// The event's changes as runs: grouped by entity (names compared by their bytes), the
    /// entities in UTF-8 byte order, each entity's changes in the event's order.
    static func runs(_ event: Event) -> ChangeRuns {
        var entities: [String] = []
        var lists: [ExactString: [ObjectChange]] = [:]
        for change in event.objectChanges {
            if lists[ExactString(change.entity)] == nil { entities.append(change.entity) }
            lists[ExactString(change.entity), default: []].append(change)
        }
        entities.sort(by: utf8Precedes)
        let ordered = entities.flatMap { lists[ExactString($0)] ?? [] }
        return ChangeRuns(entities: entities.map { ($0, lists[ExactString($0)]?.count ?? 0) }) { Array(ordered[$0]) }
    }

    static func pieces(_ event: Event, pieceBytes: Int) throws(FormatError) -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        var header = event
        header.objectChanges = []
        try V2JSONEncoder().encode(header: header, changes: runs(event), pieceBytes: pieceBytes) { (piece) throws(FormatError) in pieces.append(piece) }
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
        for file in FixtureDocuments.files() {
            if let event = try? V2JSONDecoder().decodeEvent(file.value).event, Self.hasNoUnknownMembers(event) { events.append((file.name, event)) }
        }
        return events
    }

    static func hasNoUnknownMembers(_ event: Event) -> Bool {
        event.unknownFields.isEmpty && event.objectChanges.allSatisfy { $0.unknownFields.isEmpty && $0.propertyChanges.allSatisfy(\.unknownFields.isEmpty) }
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
                if pieceBytes == 100 && expected.count > 400 { #expect(pieces.count > 1, "\(name) was not written in pieces") }
            }
        }
    }

    @Test("a value the v2 dialect cannot write stops the writer with the encoder's code")
    func unencodable() throws {
        var event = Self.tricky
        event.objectChanges[0].propertyChanges.append(PropertyChange(name: "bad", value: .attribute(.decimal("1e5x"))))
        #expect(throws: FormatError.self) { try V2JSONEncoder().encode(event) }
        #expect(Self.code(event) == .v2UnencodableValue, "the writer wrote a decimal that is not decimal text")
    }

    @Test("unknown members, in the header or a change, are refused rather than left out")
    func unknownMembers() throws {
        var header = Self.tricky
        header.unknownFields["extra"] = .bool(true)
        var change = Self.tricky
        change.objectChanges[change.objectChanges.count - 1].unknownFields["extra"] = .bool(true)
        var property = Self.tricky
        let index = try #require(property.objectChanges.lastIndex { !$0.propertyChanges.isEmpty })
        property.objectChanges[index].propertyChanges[0].unknownFields["extra"] = .bool(true)
        for event in [header, change, property] {
            #expect(Self.code(event) == .v2UnencodableValue)
        }
    }

    @Test("a source that makes fewer changes than it announced is refused")
    func shortSource() throws {
        let event = Self.tricky
        var runs = Self.runs(event)
        let make = runs.changes
        runs.changes = { Array(make($0).dropLast()) }
        do {
            try V2JSONEncoder().encode(header: event, changes: runs) { _ in }
            Issue.record("the writer wrote fewer changes than announced")
        } catch {
            #expect(error.code == .v2UnencodableValue)
        }
    }

    static func code(_ event: Event) -> FormatError.Code? {
        do {
            _ = try pieces(event, pieceBytes: 100)
            return nil
        } catch {
            return error.code
        }
    }
}
