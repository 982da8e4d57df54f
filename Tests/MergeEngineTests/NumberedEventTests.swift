import Foundation
import Testing
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import MergeEngine
import SyntheticHistory
import TestSupport

/// The numbered form a merge applies against the decoded events it stands for: on every fixture
/// event file and on generated histories, the binary decoder's own numbered output and the form
/// numbered from the decoded ``Event`` name the same strings in the same structure, and both
/// applied give the same state.
@Suite("Numbered events")
struct NumberedEventTests {
    @Test("every fixture event file: the numbered form names what the decoded event holds, and the binary decoder's own equals it")
    func fixtures() throws {
        var files: [(name: String, bytes: [UInt8])] = []
        let walker = try #require(FileManager.default.enumerator(atPath: FixtureDocuments.root.path))
        while let relative = walker.nextObject() as? String {
            guard [".json", ".cdeevent", ".bin"].contains(where: relative.hasSuffix), !relative.contains("expected"),
                let data = FileManager.default.contents(atPath: FixtureDocuments.root.appendingPathComponent(relative).path)
            else { continue }
            files.append((relative, Array(data)))
        }
        var binary = 0, json = 0
        for file in files.sorted(by: { $0.name < $1.name }) {
            if V2Binary.isBinary(file.bytes) {
                guard check(binary: file.bytes, name: file.name) else { continue }
                binary += 1
            } else {
                guard let value = try? JSONParser.parse(file.bytes), let event = try? V2JSONDecoder().decodeEvent(value).event else { continue }
                check(event, name: file.name)
                json += 1
            }
        }
        // The binary examples, the binary merge cases and the JSON events of every kind.
        #expect(binary >= 10)
        #expect(json >= 100)
    }

    @Test(
        "a generated history, JSON and binary: the same, event by event, and the same state after all of them", arguments: [GeneratedFormat.v2JSON, .v2Binary])
    func generated(format: GeneratedFormat) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("numbered-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var settings = GeneratorSettings()
        settings.stores = 3
        settings.objects = 300
        settings.changes = 4_000
        settings.seed = 7
        settings.format = format
        var generator = HistoryGenerator(settings: settings)
        _ = try generator.write(to: folder.path)
        let model = try ModelXMLReader.parse(Data(HistoryGenerator.modelXML.utf8), displayPath: "generated", versionName: nil)
        let walker = try #require(FileManager.default.enumerator(atPath: folder.path))
        var files: [String] = []
        while let relative = walker.nextObject() as? String {
            if relative.hasSuffix(".cdeevent") { files.append(relative) }
        }
        // In global count order, the order a replay takes.
        files.sort { (globalCount($0), $0) < (globalCount($1), $1) }
        #expect(files.count > 50)
        var fromEvents = StoreState(model: model), fromNumbers = StoreState(model: model)
        for file in files {
            let bytes = try #require(FileManager.default.contents(atPath: folder.appendingPathComponent(file).path)).map { $0 }
            let event: Event
            if V2Binary.isBinary(bytes) {
                event = try V2BinaryDecoder().decode(bytes)
                let numbered = try V2BinaryDecoder().decodeNumbered(bytes)
                #expect(numbered.resolved == NumberedEvent(event).resolved, "\(file)")
                let both = try V2BinaryDecoder().decodeReportingUnknownsNumbered(bytes)
                #expect(both.event == event && both.numbered == numbered, "\(file)")
                fromNumbers.apply(numbered)
            } else {
                event = try V2JSONDecoder().decodeEvent(try JSONParser.parse(bytes)).event
                fromNumbers.apply(NumberedEvent(event))
            }
            #expect(NumberedEvent(event).resolved == Self.kept(event), "\(file)")
            fromEvents.apply(event)
        }
        #expect(fromNumbers.liveObjectCount > 100)
        #expect(try fromNumbers.documentBytes() == fromEvents.documentBytes())
    }

    /// Checks a binary file; false when it does not decode.
    private func check(binary bytes: [UInt8], name: String) -> Bool {
        guard let event = try? V2BinaryDecoder().decode(bytes) else {
            // A file the decoder refuses is refused in numbered form too, with the same error.
            #expect(throws: (any Error).self, "\(name)") { try V2BinaryDecoder().decodeNumbered(bytes) }
            return false
        }
        check(event, name: name)
        let numbered: NumberedEvent
        do {
            numbered = try V2BinaryDecoder().decodeNumbered(bytes)
        } catch {
            Issue.record("\(name): \(error)")
            return true
        }
        #expect(numbered.resolved == NumberedEvent(event).resolved, "\(name)")
        // The reader's pass that builds both gives the same event and the same numbers.
        let both = try? V2BinaryDecoder().decodeReportingUnknownsNumbered(bytes)
        #expect(both?.event == event && both?.numbered == numbered, "\(name)")
        var direct = StoreState(model: nil), converted = StoreState(model: nil)
        direct.apply(numbered)
        converted.apply(event)
        #expect((try? direct.documentBytes()) == (try? converted.documentBytes()), "\(name)")
        return true
    }

    /// The numbered form of `event` names its changes' strings and values, in its order.
    private func check(_ event: Event, name: String) {
        #expect(NumberedEvent(event).resolved == Self.kept(event), "\(name)")
    }

    /// What the numbered form keeps of an event: its changes without data file lists and unknown members.
    private static func kept(_ event: Event) -> [ObjectChange] {
        event.objectChanges.map { change in
            var kept = change
            kept.dataFiles = []
            kept.unknownFields = JSONObject()
            for index in kept.propertyChanges.indices { kept.propertyChanges[index].unknownFields = JSONObject() }
            return kept
        }
    }

    private func globalCount(_ file: String) -> Int {
        Int((file.split(separator: "/").last ?? "").prefix { $0.isNumber }) ?? 0
    }
}

extension NumberedEvent {
    /// The changes as values again, every number read back as the string or value it stands for.
    var resolved: [ObjectChange] {
        changes.map { change in
            ObjectChange(
                entity: string(change.entity), globalIdentifier: string(change.identifier), type: change.type,
                sortedPropertyChanges: properties[Int(change.firstProperty)..<Int(change.endProperty)].map { property in
                    PropertyChange(name: string(property.name), sortedValue: value(of: property))
                }, sortedDataFiles: [])
        }
    }

    private func value(of property: Property) -> PropertyChange.Value {
        func strings(_ start: Int32, _ count: Int32) -> [String] { identifiers[Int(start)..<Int(start + count)].map(string) }
        let added = strings(property.first, property.added), removed = strings(property.first + property.added, property.removed)
        switch property.kind {
        case .attribute: return .attribute(attributes[Int(property.value)])
        case .dataFile: return .attributeInDataFile(filename: string(property.value))
        case .toOne: return .toOne(relatedIdentifier: property.value < 0 ? nil : string(property.value))
        case .toMany: return .toMany(added: added, removed: removed)
        case .orderedToMany:
            let moved = moves[Int(property.firstMove)..<Int(property.firstMove + property.moved)]
            #expect(moved.indices.dropFirst().allSatisfy { moved[$0 - 1].position < moved[$0].position }, "moves by ascending position")
            return .orderedToMany(
                added: added, removed: removed,
                movedByIndex: Dictionary(moved.map { (Int($0.position), string($0.identifier)) }, uniquingKeysWith: { first, _ in first }))
        }
    }
}
