import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import TestSupport

/// Binary events are written from their numbered form: `encode(_:)` numbers an `Event` and writes
/// it as a rebase's binary baseline is written (`encode(header:numbered:)`, Spec/merge.md 13.7).
/// The bytes are pinned independently, by the examples computed by hand (BinaryFixtureTests) and
/// the conformance kit; here, every numbering of the same changes must give those bytes, and the
/// bytes must read back as the event (Spec/v2-binary.md 10).
@Suite("Binary events written from numbers: the same bytes however the strings are numbered")
struct NumberedBinaryEncoderTests {
    /// `event` with each entity's changes side by side (the JSON writer's runs: entities in
    /// UTF-8 byte order, each entity's changes in the event's order).
    static func grouped(_ event: Event) -> Event {
        let runs = StreamingEncoderTests.runs(event)
        var grouped = event
        grouped.objectChanges = runs.changes(0..<runs.count)
        return grouped
    }

    static let uuid = "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"

    /// One string from many places: an identifier that is also a string value, a URL value, a
    /// property name, a data file name and the store's identifier; an upper-case UUID (a UUID
    /// table entry), the same UUID lower-case and with text after it; an ordered relationship's
    /// positions 2 and 10. (Properties, relationship lists and data files are given out of order
    /// and repeated, but the initializers sort them and keep each once.)
    static var sharedStrings: Event {
        let changes = [
            ObjectChange(
                entity: "Item", globalIdentifier: uuid, type: .insert,
                propertyChanges: [
                    PropertyChange(name: "z", value: .attribute(.string(uuid))),
                    PropertyChange(name: uuid, value: .attribute(.url("x"))),
                    PropertyChange(name: "a", value: .attributeInDataFile(filename: "x")),
                    PropertyChange(name: "many", value: .toMany(added: ["x", uuid.lowercased(), "x", uuid + "-1"], removed: ["S", "S"])),
                    PropertyChange(
                        name: "order", value: .orderedToMany(added: ["x", uuid], removed: [uuid + "-1"], movedByIndex: [10: "x", 2: uuid, 0: "x"])),
                    PropertyChange(name: "one", value: .toOne(relatedIdentifier: "S")),
                    PropertyChange(name: "none", value: .toOne(relatedIdentifier: nil)),
                ], dataFiles: ["x", "b", "x"]),
            ObjectChange(entity: "Item", globalIdentifier: "x", type: .update, propertyChanges: [PropertyChange(name: "z", value: .attribute(.string("S")))]),
            ObjectChange(entity: "Another", globalIdentifier: uuid.lowercased(), type: .delete),
        ]
        return Event(
            uniqueIdentifier: uuid + "-1", type: .merge, storeIdentifier: "S", revision: 2, globalCount: 7, timestamp: 1.25,
            otherStoreRevisions: [uuid: 1, "x": 4], objectChanges: changes)
    }

    static var events: [(String, Event)] { StreamingEncoderTests.events.map { ($0.0, grouped($0.1)) } + [("shared strings", sharedStrings)] }

    static func header(_ event: Event) -> Event {
        var header = event
        header.objectChanges = []
        return header
    }

    @Test("every v2 event of Fixtures/ and hand-made ones, numbered from their strings and as a merge reads them")
    func sameBytes() throws {
        let events = Self.events
        #expect(events.count > 30)
        for (name, event) in events {
            // Numbered from the event's strings (a number per representation: repeats).
            let expected = try V2BinaryEncoder().encode(event)
            #expect(try V2BinaryDecoder().decode(expected) == event, "\(name): read back")
            // As a merge reads the file: strings as bytes, UUIDs as their halves, one number each.
            // Compared first: a failed expectation on two long arrays would show their difference,
            // which takes minutes to work out.
            let read = try V2BinaryDecoder().decodeNumbered(expected)
            let sameRead = try V2BinaryEncoder().encode(header: Self.header(event), numbered: read) == expected
            #expect(sameRead, "\(name), as read")
        }
    }

    @Test("an event whose public lists were set out of order or with repeats is written as the event with them in order, each once")
    func publicListsInAnyOrder() throws {
        let canonical = Self.sharedStrings
        var event = canonical
        let insert = try #require(event.objectChanges.firstIndex { $0.type == .insert })
        // Set through the public properties, past the initializers that sort them.
        event.objectChanges[insert].propertyChanges.reverse()
        for index in event.objectChanges[insert].propertyChanges.indices {
            switch event.objectChanges[insert].propertyChanges[index].value {
            case .toMany(let added, let removed):
                event.objectChanges[insert].propertyChanges[index].value = .toMany(added: (added + added).reversed(), removed: removed + removed)
            case .orderedToMany(let added, let removed, let moved):
                event.objectChanges[insert].propertyChanges[index].value = .orderedToMany(
                    added: added.reversed() + added, removed: removed + removed, movedByIndex: moved)
            default: break
            }
        }
        event.objectChanges[insert].dataFiles.reverse()
        #expect(event != canonical)
        let same = try V2BinaryEncoder().encode(event) == V2BinaryEncoder().encode(canonical)
        #expect(same)
    }

    @Test("an ordered position outside 0...999999999 is refused, however far outside")
    func positionsOutOfRange() {
        for position in [-1, 1_000_000_000, 5_000_000_003, Int.max, Int.min] {
            var event = Self.sharedStrings
            let moved = PropertyChange(name: "order", value: .orderedToMany(added: [], removed: [], movedByIndex: [position: "x"]))
            event.objectChanges[event.objectChanges.count - 1].propertyChanges = [moved]
            do {
                _ = try V2BinaryEncoder().encode(event)
                Issue.record("position \(position) written")
            } catch {
                // A position beyond Int32 is named by Int32's end and what lies beyond it.
                let named = Int32(exactly: position) != nil ? "position \(position) is" : position > 0 ? "\(Int32.max) or more" : "\(Int32.min) or less"
                #expect(error.code == .v2UnencodableValue && error.message.contains(named), "\(error)")
            }
        }
    }

    @Test("changes out of entity order, a deflating encoder and unknown header members are refused")
    func refusals() throws {
        var apart = Self.sharedStrings
        apart.objectChanges.append(ObjectChange(entity: "Another", globalIdentifier: "late", type: .update))
        var unknown = Self.sharedStrings
        unknown.unknownFields["extra"] = .bool(true)
        for (encoder, event) in [(V2BinaryEncoder(), apart), (V2BinaryEncoder(deflateSections: true), Self.sharedStrings), (V2BinaryEncoder(), unknown)] {
            do {
                _ = try encoder.encode(header: Self.header(event), numbered: NumberedEvent(event))
                Issue.record("written: \(event.objectChanges.count) changes")
            } catch {
                #expect(error.code == .v2UnencodableValue)
            }
        }
        // Grouped, the same changes are written; so are an entity's changes side by side in the
        // wrong order of entities.
        #expect(try V2BinaryEncoder().encode(header: Self.header(apart), numbered: NumberedEvent(Self.grouped(apart))).count > 100)
        var descending = Self.sharedStrings
        descending.objectChanges.reverse()
        #expect(throws: FormatError.self) { try V2BinaryEncoder().encode(header: Self.header(descending), numbered: NumberedEvent(descending)) }
    }

    @Test("an event whose changes were put out of entity order is written in the order readers require, as the same event")
    func canonicalOrder() throws {
        var event = Self.sharedStrings
        event.objectChanges.append(ObjectChange(entity: "Another", globalIdentifier: "late", type: .update))
        event.objectChanges.reverse()
        let read = try V2BinaryDecoder().decode(V2BinaryEncoder().encode(event))
        #expect(read == Self.grouped(event) && read.objectChanges.map(\.globalIdentifier) == ["late", Self.uuid.lowercased(), "x", Self.uuid])
    }
}
