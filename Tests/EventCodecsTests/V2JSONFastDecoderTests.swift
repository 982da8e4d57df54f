import Foundation
import Testing
import JSONDocument
import EnsembleModel
import EventCodecs
import SchemaValidation
import TestSupport

/// The fast decoder may only give a part where the general pipeline (strict parser, v2 event
/// schema, ``V2JSONDecoder``) finds nothing to report, and then exactly the part that pipeline
/// gives; it should take every ordinary event (otherwise it saves nothing). Checked on every JSON
/// file of the fixtures, on seeded edits of their trees and on seeded edits of their bytes.
@Suite("v2 JSON fast decoder")
struct V2JSONFastDecoderTests {
    /// Edits per mutation test: of trees 2,000 in the suite and 8,000 in the long run
    /// (``LongRun``), of bytes 8,000 (cheaper, and 2,000 missed an empty `globalIdentifier`
    /// taken by the fast decoder, a mutation 8,000 catches); `FAST_DECODER_ROUNDS` asks for any
    /// other number of both by hand.
    static let treeRounds = roundsAsked ?? LongRun.count(2_000, long: 8_000)
    static let byteRounds = roundsAsked ?? 8_000
    static let roundsAsked = ProcessInfo.processInfo.environment["FAST_DECODER_ROUNDS"].flatMap { Int($0) }

    static let positions: [EventPartPosition] = [.single, .part(index: 1, count: 2), .part(index: 2, count: 2)]

    /// The general pipeline's part, or nil when it reports anything at all.
    static func general(_ bytes: [UInt8], position: EventPartPosition, validator: SchemaValidator) -> EventPart? {
        guard let json = try? JSONParser.parse(bytes), validator.validate(json).isEmpty,
            let part = try? V2JSONDecoder().decodePart(json, position: position), part.unknownKeys.isEmpty
        else { return nil }
        return part
    }

    /// Compares both readers on `bytes`; returns (fast took it, general took it).
    @discardableResult
    static func compare(_ bytes: [UInt8], _ label: @autoclosure () -> String, validator: SchemaValidator) -> (fast: Int, general: Int) {
        var counts = (fast: 0, general: 0)
        for position in positions {
            let expected = general(bytes, position: position, validator: validator)
            let fast = V2JSONFastDecoder.decodePart(bytes, position: position)
            if expected != nil { counts.general += 1 }
            if position == .single { compareNumbered(bytes, fast, label()) }
            guard let fast else { continue }
            counts.fast += 1
            #expect(fast == expected, "\(label()) at \(position): \(String(decoding: bytes, as: UTF8.self).prefix(2_000))")
        }
        return counts
    }

    /// The numbered form of a single file, taken exactly where the part is: the same header, and
    /// changes that name the same strings and values (``NumberedEvent/resolved``) and make the
    /// same summary.
    static func compareNumbered(_ bytes: [UInt8], _ part: EventPart?, _ label: String) {
        let numbered = V2JSONFastDecoder.decodeNumbered(bytes)
        #expect((numbered == nil) == (part == nil), "\(label): \(String(decoding: bytes, as: UTF8.self).prefix(2_000))")
        guard let part, let numbered, let event = try? V2JSONDecoder.join([part]), let header = try? V2JSONDecoder.join([numbered.part]) else { return }
        #expect(numbered.part.header == part.header && numbered.part.objectChanges.isEmpty, "\(label)")
        #expect(numbered.changes.resolved == NumberedEvent(event).resolved && numbered.changes.movesAscend, "\(label)")
        let expected = SourcedEvent(event: event, file: label).summary()
        let summary = SourcedEvent(header: header, changes: numbered.changes, file: label)
        #expect(summary.event == expected.event && summary.changeCounts == expected.changeCounts, "\(label)")
        #expect(summary.dataFileReferences == expected.dataFileReferences, "\(label)")
    }

    /// Compares both readers on `rounds` inputs, each a valid one with `edits` random edits (the
    /// first of them giving the bytes); returns how often each took the input.
    static func compareMutations<Input>(
        of valid: [Input], rounds: Int, seed: UInt64, edits: ClosedRange<Int>, validator: SchemaValidator,
        first: (Input, inout SplitMix64) -> [UInt8], edit: (Input, inout SplitMix64) -> Input
    ) -> (fast: Int, general: Int) {
        var random = SplitMix64(seed: seed)
        var taken = (fast: 0, general: 0)
        for round in 0..<rounds {
            var input = valid[round % valid.count]
            for _ in 1..<Int.random(in: edits, using: &random) { input = edit(input, &random) }
            let counts = compare(first(input, &random), "round \(round)", validator: validator)
            taken.fast += counts.fast
            taken.general += counts.general
        }
        return taken
    }

    @Test("on every fixture: the general pipeline's part, and every ordinary event taken")
    func fixtures() throws {
        let validator = try BundledSchema.v2Event.validator()
        let files = FixtureDocuments.files()
        #expect(files.count > 300)
        var taken = (fast: 0, general: 0)
        for file in files {
            let counts = Self.compare(file.bytes, file.name, validator: validator)
            taken.fast += counts.fast
            taken.general += counts.general
        }
        // Valid events with unknown keys or escapes the fast path leaves alone are rare.
        #expect(taken.fast > 300)
        #expect(Double(taken.fast) > 0.9 * Double(taken.general), "fast \(taken.fast) of \(taken.general)")
    }

    /// The values of a tree, counted as Spec/v2-json.md 3.2 counts them (keys are not values).
    static func valueCount(_ value: JSONValue) -> Int {
        switch value {
        case .object(let object): 1 + object.reduce(0) { $0 + valueCount($1.value) }
        case .array(let elements): 1 + elements.reduce(0) { $0 + valueCount($1) }
        default: 1
        }
    }

    @Test("on every fixture: with a budget of exactly its values both readers take it, with one less the parser refuses and the fast decoder declines")
    func valueBudget() throws {
        var checked = 0
        for file in FixtureDocuments.files() {
            guard V2JSONFastDecoder.decodePart(file.bytes, position: .single) != nil, let tree = try? JSONParser.parse(file.bytes) else { continue }
            let count = Self.valueCount(tree)
            var options = JSONReadingOptions()
            var budget = DecodedValueBudget(storedBytes: file.bytes.count)
            budget.maximumValues = count
            options.valueBudget = budget
            #expect(V2JSONFastDecoder.decodePart(file.bytes, position: .single, options: options) != nil, "\(file.name)")
            #expect((try? JSONParser.parse(file.bytes, options: options)) == tree, "\(file.name)")
            budget.maximumValues = count - 1
            options.valueBudget = budget
            #expect(V2JSONFastDecoder.decodePart(file.bytes, position: .single, options: options) == nil, "\(file.name)")
            do {
                _ = try JSONParser.parse(file.bytes, options: options)
                Issue.record("\(file.name): parsed beyond its budget")
            } catch {
                #expect(error.code == .jsonTooLarge, "\(file.name)")
            }
            checked += 1
        }
        #expect(checked > 300)
    }

    @Test(
        "a string limit one byte below the longest key (of an event, an object change, a property change): the parser refuses, the fast decoder declines",
        arguments: [
            (
                #"{"uniqueIdentifier":"E","type":200,"globalCount":3,"timestamp":"1.5","storeIdentifier":"A","revisionsByStoreIdentifier":{"A":1},"changesByEntity":{}}"#,
                EventPartPosition.single, 26
            ),
            (#"{"changesByEntity":{"A":[{"type":100,"globalIdentifier":"a"}]}}"#, .part(index: 2, count: 2), 16),
            (
                #"{"changesByEntity":{"A":[{"type":200,"globalIdentifier":"a","properties":[{"name":"t","type":3,"addedIdentifiers":["x"],"movedIdentifiersByIndex":{"0":"x"}}]}]}}"#,
                .part(index: 2, count: 2), 23
            ),
        ])
    func keyLongerThanStringLimit(text: String, position: EventPartPosition, longestKey: Int) throws {
        let bytes = Array(text.utf8)
        var options = JSONReadingOptions()
        options.maximumStringBytes = longestKey
        #expect(V2JSONFastDecoder.decodePart(bytes, position: position, options: options) != nil)
        #expect((try? JSONParser.parse(bytes, options: options)) != nil)
        options.maximumStringBytes = longestKey - 1
        #expect(V2JSONFastDecoder.decodePart(bytes, position: position, options: options) == nil)
        do {
            _ = try JSONParser.parse(bytes, options: options)
            Issue.record("parsed a key longer than the string limit")
        } catch {
            #expect(error.code == .jsonTooLarge)
        }
    }

    @Test("escapes, whitespace and non-ASCII text read as the parser reads them")
    func escapes() throws {
        let validator = try BundledSchema.v2Event.validator()
        let text = """
             {"uniqueIdentifier" : "E\\/1\\u00e9\\n", "type":200,"globalCount":3,"timestamp":"1.5",
              "storeIdentifier":"st\\u0041ore","modelVersion":null,"revisionsByStoreIdentifier":{"stAore":2,"é":0},
              "changesByEntity":{"Zeta":[],"Note":[{"type":200,"globalIdentifier":"n\\"1","properties":[
                {"name":"title","type":0,"value":"caf\\u00E9 ☕"},{"propertyName":"when","type":0,"value":["date",1.5e3]},
                {"propertyName":"big","type":0,"value":-12345678901234567},{"propertyName":"ratio","type":0,"value":-0.0},
                {"propertyName":"owner","type":1,"relatedIdentifier":null},
                {"propertyName":"tags","type":3,"addedIdentifiers":["b","a"],"movedIdentifiersByIndex":{"0":"a","10":"b"}}]}],
              "Alpha":[{"type":100,"globalIdentifier":"a","dataFiles":["F2","F1"]}]} }
            """
        let bytes = Array(text.utf8)
        let counts = Self.compare(bytes, "escapes", validator: validator)
        #expect(counts.fast == 2 && counts.general == 2, "\(counts)")  // single file and part 1
        let part = try #require(V2JSONFastDecoder.decodePart(bytes, position: .single))
        #expect(part.header?.uniqueIdentifier == "E/1é\n")
        #expect(part.objectChanges.map(\.entity) == ["Alpha", "Note"])
    }

    @Test("a store named twice in the revision set, however it is spelled, is left to the general pipeline")
    func duplicateStores() throws {
        for revisions in [#"{"A":1,"A":2}"#, #"{"A":1,"\u0041":2}"#, #"{"B":0,"A":1,"B":0}"#] {
            let text =
                #"{"uniqueIdentifier":"E","type":200,"globalCount":3,"timestamp":"1.5","storeIdentifier":"A","#
                + #""revisionsByStoreIdentifier":\#(revisions),"changesByEntity":{}}"#
            #expect(V2JSONFastDecoder.decodePart(Array(text.utf8), position: .single) == nil, "\(revisions)")
        }
    }

    @Test("an entity, a property, an identifier of a set or a data file given twice, however spelled, is left to the general pipeline in both forms")
    func duplicates() throws {
        let validator = try BundledSchema.v2Event.validator()
        func event(_ changes: String) -> [UInt8] {
            let text =
                #"{"uniqueIdentifier":"E","type":200,"globalCount":3,"timestamp":"1.5","storeIdentifier":"A","#
                + #""revisionsByStoreIdentifier":{"A":1},"changesByEntity":{\#(changes)}}"#
            return Array(text.utf8)
        }
        let title = #"{"name":"title","type":0,"value":"x"}"#, escapedTitle = #"{"propertyName":"t\u0069tle","type":0,"value":"y"}"#
        let valid = [
            #""B":[{"type":100,"globalIdentifier":"b"}],"A":[{"type":100,"globalIdentifier":"a","properties":[\#(title)]}]"#,
            #""A":[{"type":200,"globalIdentifier":"a","properties":[{"name":"tags","type":2,"addedIdentifiers":["y","x"]},\#(title)]}]"#,
            #""A":[{"type":100,"globalIdentifier":"a","dataFiles":["G","F"]}]"#,
        ]
        let twice = [
            #""A":[{"type":100,"globalIdentifier":"a"}],"B":[],"\u0041":[{"type":100,"globalIdentifier":"b"}]"#,
            #""B":[{"type":100,"globalIdentifier":"b"}],"A":[],"B":[{"type":100,"globalIdentifier":"c"}]"#,
            #""A":[{"type":200,"globalIdentifier":"a","properties":[\#(title),{"name":"z","type":1,"relatedIdentifier":null},\#(escapedTitle)]}]"#,
            #""A":[{"type":200,"globalIdentifier":"a","properties":[{"name":"tags","type":2,"addedIdentifiers":["y","x","\u0079"]}]}]"#,
            #""A":[{"type":200,"globalIdentifier":"a","properties":[{"name":"tags","type":2,"removedIdentifiers":["x","x"]}]}]"#,
            #""A":[{"type":100,"globalIdentifier":"a","dataFiles":["F","G","F"]}]"#,
        ]
        for changes in valid {
            let counts = Self.compare(event(changes), changes, validator: validator)
            #expect(counts.fast == 2 && counts.general == 2, "\(changes)")  // single file and part 1
        }
        for changes in twice {
            #expect(V2JSONFastDecoder.decodePart(event(changes), position: .single) == nil, "\(changes)")
            #expect(V2JSONFastDecoder.decodeNumbered(event(changes)) == nil, "\(changes)")
        }
    }

    @Test("on 2,000 edits of fixture trees (8,000 in the long run): never a part the general pipeline would not give")
    func treeMutations() throws {
        let validator = try BundledSchema.v2Event.validator()
        let valid = FixtureDocuments.json().map(\.value).filter { validator.validate($0).isEmpty }
        #expect(!valid.isEmpty)
        let taken = Self.compareMutations(of: valid, rounds: Self.treeRounds, seed: 18, edits: 1...3, validator: validator) { value, random in
            Array(JSONWriter().string(JSONMutation.mutate(value, using: &random)).utf8)
        } edit: { value, random in
            JSONMutation.mutate(value, using: &random)
        }
        // Both kinds of outcome must be common for the comparison to mean something.
        #expect(taken.fast > Self.treeRounds / 16, "\(taken)")
    }

    /// Bytes that matter to a JSON reader: quotes, escapes, broken and valid UTF-8, number
    /// forms, structure.
    static let pieces: [[UInt8]] = [
        Array("\\".utf8), Array("\"".utf8), Array("\\u00e9".utf8), Array("\\/".utf8), Array("\\ud83d\\ude00".utf8), Array("\\ud800".utf8),
        Array("\\u0000".utf8), Array("\\n".utf8), Array("\\x".utf8), Array("\\u12".utf8), [0xC3, 0xA9], [0xC3], [0xFF], [0xED, 0xA0, 0x80],
        [0xF0, 0x9F, 0x98, 0x80], [0xC0, 0xAF], [0xE0, 0x80, 0x80], [0xF4, 0x90, 0x80, 0x80], Array("0".utf8), Array("-".utf8), Array(".".utf8),
        Array("e".utf8), Array("E+".utf8), Array(" ".utf8), Array("\t\r\n".utf8), Array(",".utf8), Array("}".utf8), Array("]".utf8),
        Array("{".utf8), Array("[".utf8), [0x01], [0x7F], Array("01".utf8), Array("1.0".utf8), Array("1e2".utf8), Array("null".utf8),
        Array("true".utf8), Array("9999999999999999999".utf8), [0xEF, 0xBB, 0xBF], Array(":".utf8), Array("_".utf8),
    ]

    static func mutateBytes(_ input: [UInt8], using random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        guard !bytes.isEmpty else { return bytes }
        let at = Int.random(in: 0..<bytes.count, using: &random)
        let piece = pieces[Int.random(in: 0..<pieces.count, using: &random)]
        switch Int.random(in: 0..<7, using: &random) {
        case 5 where (UInt8(ascii: "A")...UInt8(ascii: "z")).contains(bytes[at]):
            // The same letter escaped: the same text inside a string, a syntax error outside.
            bytes.replaceSubrange(at..<(at + 1), with: Array(String(format: "\\u%04x", bytes[at]).utf8))
        case 6 where [UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "{"), UInt8(ascii: "[")].contains(bytes[at]):
            bytes.insert(contentsOf: Array(" \n\t\r".utf8), at: at + 1)
        case 0: bytes.replaceSubrange(at..<(at + 1), with: piece)
        case 1, 2: bytes.insert(contentsOf: piece, at: at)
        case 3: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...3, using: &random)))
        default: bytes.removeSubrange(at...)
        }
        return bytes
    }

    @Test("on 8,000 edits of fixture bytes: never a part the general pipeline would not give")
    func byteMutations() throws {
        let validator = try BundledSchema.v2Event.validator()
        let valid = FixtureDocuments.files().filter { validator.validate($0.value).isEmpty }.map(\.bytes)
        #expect(!valid.isEmpty)
        let taken = Self.compareMutations(of: valid, rounds: Self.byteRounds, seed: 1818, edits: 1...2, validator: validator) { bytes, random in
            Self.mutateBytes(bytes, using: &random)
        } edit: { bytes, random in
            Self.mutateBytes(bytes, using: &random)
        }
        #expect(taken.fast > Self.byteRounds / 16, "\(taken)")
        #expect(taken.general > taken.fast, "\(taken)")
    }
}
