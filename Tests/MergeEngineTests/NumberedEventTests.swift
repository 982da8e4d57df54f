import Foundation
import Testing
import JSONDocument
import EnsembleModel
import DataModel
import EventCodecs
import MergeEngine
import ModelValidation
import SyntheticHistory
import TestSupport

/// The numbered form a merge applies against the decoded events it stands for: on every fixture
/// event file and on generated histories, the binary decoder's own numbered output and the form
/// numbered from the decoded ``Event`` name the same strings in the same structure, and both
/// applied give the same state.
@Suite("Numbered events")
struct NumberedEventTests {
    /// A new folder (the caller removes it) holding a generated history of 4,000 changes by three
    /// stores.
    static func generatedHistory(seed: UInt64, format: GeneratedFormat) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("numbered-\(UUID().uuidString)")
        var settings = GeneratorSettings()
        settings.stores = 3
        settings.objects = 300
        settings.changes = 4_000
        settings.seed = seed
        settings.format = format
        var generator = HistoryGenerator(settings: settings)
        _ = try generator.write(to: folder.path)
        return folder
    }

    /// Every file under Fixtures/ that may hold an event (JSON, `.cdeevent`, `.bin`; expected
    /// outputs left out), by relative path, with its bytes, sorted by path.
    static func fixtureEventFiles() throws -> [(name: String, bytes: [UInt8])] {
        var files: [(name: String, bytes: [UInt8])] = []
        let walker = try #require(FileManager.default.enumerator(atPath: FixtureDocuments.root.path))
        while let relative = walker.nextObject() as? String {
            guard [".json", ".cdeevent", ".bin"].contains(where: relative.hasSuffix), !relative.contains("expected"),
                let data = FileManager.default.contents(atPath: FixtureDocuments.root.appendingPathComponent(relative).path)
            else { continue }
            files.append((relative, Array(data)))
        }
        return files.sorted { $0.name < $1.name }
    }

    @Test("string numbers sorted by their strings' UTF-8 bytes, whatever order they come in")
    func stringOrder() {
        // "b", "a", "B", "ab", "": by UTF-8 bytes "" < "B" (0x42) < "a" < "ab" < "b".
        let event = NumberedEvent(text: Array("baBab".utf8), ends: [1, 2, 3, 5, 5])
        #expect(event.inStringOrder([0, 1, 2, 3, 4]) == [4, 2, 1, 3, 0])
        #expect(event.inStringOrder([3, 0, 1]) == [1, 3, 0])
        #expect(event.inStringOrder([3]) == [3])
        #expect(event.inStringOrder([]) == [])
    }

    @Test("same, isEmpty and hasBytes read the strings' bytes, whether a UUID is kept as its halves or as text")
    func sameBytes() {
        // An empty string (number 0) and another text first, so that the halves' positions are
        // filled in for them; then two UUIDs alike in their first half, each kept once as halves
        // and once as text.
        let texts = ["01234567-89AB-CDEF-0000-000000000001", "01234567-89AB-CDEF-0000-000000000002"]
        var event = NumberedEvent()
        var strings: [String] = []
        for text in ["", "Item"] {
            _ = Array(text.utf8).withUnsafeBufferPointer { event.append($0) }
            strings.append(text)
        }
        for text in texts {
            guard let halves = text.utf8.withContiguousStorageIfAvailable({ UUIDPrefix.halves(ofText: $0) }) ?? nil else {
                Issue.record("\(text) is not read as a UUID")
                return
            }
            _ = event.append(uuid: halves)
            strings.append(text)
        }
        for text in texts {
            _ = Array(text.utf8).withUnsafeBufferPointer { event.append($0) }
            strings.append(text)
        }
        for a in strings.indices {
            #expect(event.string(Int32(a)) == strings[a])
            #expect(event.isEmpty(Int32(a)) == strings[a].isEmpty, "\(strings[a])")
            for b in strings.indices {
                #expect(event.same(Int32(a), Int32(b)) == (strings[a] == strings[b]), "\(strings[a]) and \(strings[b])")
                let matches = Array(strings[b].utf8).withUnsafeBufferPointer { event.hasBytes(Int32(a), $0) }
                #expect(matches == (strings[a] == strings[b]), "\(strings[a]) has the bytes of \(strings[b])")
            }
        }
    }

    @Test("two numbered events with UUIDs kept as halves are equal when their strings' bytes are: a related identifier changed makes them differ")
    func equalByStrings() throws {
        func event(related: String) -> Event {
            Event(
                uniqueIdentifier: "U", type: .save, storeIdentifier: "S", revision: 0, globalCount: 1, timestamp: 1,
                objectChanges: [
                    ObjectChange(
                        entity: "Item", globalIdentifier: "01234567-89AB-CDEF-0000-000000000001", type: .update,
                        propertyChanges: [PropertyChange(name: "next", value: .toOne(relatedIdentifier: related))])
                ])
        }
        let first = try V2BinaryDecoder().decodeNumbered(try V2BinaryEncoder().encode(event(related: "01234567-89AB-CDEF-0000-000000000002")))
        let again = try V2BinaryDecoder().decodeNumbered(try V2BinaryEncoder().encode(event(related: "01234567-89AB-CDEF-0000-000000000002")))
        let other = try V2BinaryDecoder().decodeNumbered(try V2BinaryEncoder().encode(event(related: "01234567-89AB-CDEF-0000-000000000003")))
        #expect(first == again)
        #expect(first != other)
        // The same changes from the whole event, whose strings are text (numbered in another order).
        #expect(NumberedEvent(event(related: "01234567-89AB-CDEF-0000-000000000002")).resolved == first.resolved)
        // A UUID's sort prefix from its halves is the prefix of its text, whatever its digits.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let high = state ^ (state >> 29), low = state &* 31
            #expect(UUIDPrefix.prefixKey(high: high) == ExactString.prefixKey(UUIDPrefix.text(high: high, low: low)), "\(high)")
        }
    }

    @Test("every fixture event file: the numbered form names what the decoded event holds, and the binary decoder's own equals it")
    func fixtures() throws {
        let files = try Self.fixtureEventFiles()
        var binary = 0, json = 0
        for file in files {
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
        let folder = try Self.generatedHistory(seed: 7, format: format)
        defer { try? FileManager.default.removeItem(at: folder) }
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
                #expect(numbered.resolved == NumberedEvent(event).resolved && numbered.movesAscend, "\(file)")
                let both = try V2BinaryDecoder().decodeReportingUnknownsNumbered(bytes)
                #expect(both.event == event && both.numbered == numbered, "\(file)")
                fromNumbers.apply(numbered)
            } else {
                event = try V2JSONDecoder().decodeEvent(try JSONParser.parse(bytes)).event
                // The fast decoder's own numbered form, as a merge reads the file.
                let numbered = try #require(V2JSONFastDecoder.decodeNumbered(bytes), "\(file)").changes
                #expect(numbered.resolved == NumberedEvent(event).resolved, "\(file)")
                fromNumbers.apply(numbered)
            }
            #expect(NumberedEvent(event).resolved == Self.kept(event), "\(file)")
            fromEvents.apply(event)
        }
        #expect(fromNumbers.liveObjectCount > 100)
        #expect(try fromNumbers.documentBytes() == fromEvents.documentBytes())
    }

    @Test("every fixture event as binary: the summary and the model findings made from the numbered form alone equal the decoded event's")
    func summariesAndFindingsOfFixtures() throws {
        let model = try ModelBundle(path: FixtureDocuments.root.appendingPathComponent("models/Inheritance.xcdatamodeld").path).load()
        let files = try Self.fixtureEventFiles()
        var compared = 0, withDataFiles = 0, listed = 0
        var findings = FindingCounts()
        for file in files {
            // Binary files as they are; JSON events written as binary (the merge's reader numbers binary files only).
            let bytes: [UInt8]
            if V2Binary.isBinary(file.bytes) {
                bytes = file.bytes
            } else {
                guard let value = try? JSONParser.parse(file.bytes), let event = try? V2JSONDecoder().decodeEvent(value).event,
                    let encoded = try? V2BinaryEncoder().encode(event)
                else { continue }
                bytes = encoded
            }
            guard let summary = compareNumberedOnly(bytes, name: file.name, models: [model], findings: &findings) else { continue }
            compared += 1
            if !summary.dataFileReferences.isEmpty { withDataFiles += 1 }
            // The same event with changes that list data files no property names (a change's
            // own list counts in the summary too).
            guard var listing = try? V2BinaryDecoder().decode(bytes), !listing.objectChanges.isEmpty else { continue }
            for index in listing.objectChanges.indices {
                listing.objectChanges[index].dataFiles = sortedUnique(listing.objectChanges[index].dataFiles + ["LISTED-\(index % 3)"])
            }
            guard let encoded = try? V2BinaryEncoder().encode(listing),
                let summary = compareNumberedOnly(encoded, name: "\(file.name), listing data files", models: [], findings: &findings)
            else { continue }
            #expect(summary.dataFileReferences.contains("LISTED-0"), "\(file.name)")
            listed += 1
        }
        #expect(compared >= 100)
        #expect(withDataFiles > 0)
        #expect(listed >= 100)
        // Every finding the model check makes, found on these files (the model-invalid cases).
        #expect(findings.codes.isSuperset(of: Self.modelCodes), "\(findings.codes)")
        #expect(findings.total > 50)
    }

    @Test("a generated binary history: the summaries and the model findings from the numbered form alone equal the decoded events'")
    func summariesAndFindingsOfGeneratedHistory() throws {
        let folder = try Self.generatedHistory(seed: 11, format: .v2Binary)
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try ModelXMLReader.parse(Data(HistoryGenerator.modelXML.utf8), displayPath: "generated", versionName: nil)
        let broken = try ModelXMLReader.parse(Data(Self.brokenModelXML.utf8), displayPath: "broken", versionName: nil)
        let walker = try #require(FileManager.default.enumerator(atPath: folder.path))
        var compared = 0
        var findings = FindingCounts()
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".cdeevent"), let data = FileManager.default.contents(atPath: folder.appendingPathComponent(relative).path) else {
                continue
            }
            guard compareNumberedOnly(Array(data), name: relative, models: [model, broken], findings: &findings) != nil else { continue }
            compared += 1
        }
        #expect(compared > 50)
        #expect(findings.codes.isSuperset(of: Self.modelCodes.subtracting(["model.delete-with-properties"])), "\(findings.codes)")
    }

    /// The codes of the model check (Spec/model.md 9).
    private static let modelCodes: Set<String> = [
        "model.unknown-entity", "model.unknown-property", "model.abstract-entity", "model.delete-with-properties", "model.transient-property",
        "model.wrong-kind", "model.wrong-value-type", "model.integer-out-of-range",
    ]

    /// The generator's model with a finding of each kind for its events: Folder renamed, Tag
    /// abstract, Note.title gone, Note.score transient, Note.body a date, Note.rank 16 bits,
    /// Note.attachment (in data files) a string, Note.tags ordered.
    private static let brokenModelXML =
        HistoryGenerator.modelXML
        .replacingOccurrences(of: "\"Folder\"", with: "\"Folders\"")
        .replacingOccurrences(
            of: "<entity name=\"Tag\" representedClassName=\"Tag\"", with: "<entity name=\"Tag\" representedClassName=\"Tag\" isAbstract=\"YES\""
        )
        .replacingOccurrences(of: "<attribute name=\"title\" optional=\"YES\" attributeType=\"String\"/>", with: "")
        .replacingOccurrences(of: "<attribute name=\"score\" optional=\"YES\"", with: "<attribute name=\"score\" optional=\"YES\" transient=\"YES\"")
        .replacingOccurrences(of: "name=\"body\" optional=\"YES\" attributeType=\"String\"", with: "name=\"body\" optional=\"YES\" attributeType=\"Date\"")
        .replacingOccurrences(of: "attributeType=\"Integer 64\"", with: "attributeType=\"Integer 16\"")
        .replacingOccurrences(of: "attributeType=\"Binary\" allowsExternalBinaryDataStorage=\"YES\"", with: "attributeType=\"String\"")
        .replacingOccurrences(
            of: "<relationship name=\"tags\" optional=\"YES\" toMany=\"YES\"",
            with: "<relationship name=\"tags\" optional=\"YES\" toMany=\"YES\" ordered=\"YES\"")

    private struct FindingCounts {
        var codes: Set<String> = []
        var total = 0
    }

    /// Decodes a binary file both ways, the merge's reader's (numbered form only) and the
    /// decoded event's, and compares the summaries and each model's findings; gives the summary,
    /// nil when the file does not decode.
    private func compareNumberedOnly(_ bytes: [UInt8], name: String, models: [DataModel], findings: inout FindingCounts) -> SourcedEvent? {
        // Refused with the same error, or read to the same header and numbered form.
        #expect(BinaryNumberedDifferential.mismatch(bytes) == nil, "\(name)")
        guard let whole = try? V2BinaryDecoder().decodeReportingUnknowns(bytes) else { return nil }
        let numberedOnly: DecodedBinaryEvent
        do {
            numberedOnly = try V2BinaryDecoder().decodeReportingUnknownsNumberedOnly(bytes)
        } catch {
            Issue.record("\(name): \(error)")
            return nil
        }
        guard let numbered = numberedOnly.numbered else {
            Issue.record("\(name): no numbered form")
            return nil
        }
        #expect(numberedOnly.event.objectChanges.isEmpty, "\(name)")
        #expect(numberedOnly.unknownMembers == whole.unknownMembers && numberedOnly.unknownSectionOffsets == whole.unknownSectionOffsets, "\(name)")
        let expected = SourcedEvent(event: whole.event, file: name).summary()
        let summary = SourcedEvent(header: numberedOnly.event, changes: numbered, file: name)
        #expect(summary.isSummary && summary.event == expected.event, "\(name)")
        #expect(summary.changeCounts == expected.changeCounts, "\(name)")
        #expect(summary.dataFileReferences == expected.dataFileReferences, "\(name)")
        for model in models {
            let fromEvent = ModelValidator(model: model).validate(whole.event.objectChanges)
            let fromNumbers = ModelValidator(model: model).validate(numbered)
            #expect(fromNumbers == fromEvent, "\(name)")
            findings.total += fromEvent.count
            findings.codes.formUnion(fromEvent.map(\.code.rawValue))
        }
        return summary
    }

    /// Checks a binary file; false when it does not decode.
    private func check(binary bytes: [UInt8], name: String) -> Bool {
        // A file the decoder refuses is refused in numbered form too, with the same error.
        #expect(BinaryNumberedDifferential.mismatch(bytes) == nil, "\(name)")
        guard let event = try? V2BinaryDecoder().decode(bytes) else { return false }
        check(event, name: name)
        let numbered: NumberedEvent
        do {
            numbered = try V2BinaryDecoder().decodeNumbered(bytes)
        } catch {
            Issue.record("\(name): \(error)")
            return true
        }
        #expect(numbered.resolved == NumberedEvent(event).resolved && numbered.movesAscend, "\(name)")
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
        #expect(NumberedEvent(event).resolved == Self.kept(event) && NumberedEvent(event).movesAscend, "\(name)")
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
