import Testing
import Foundation
import TestSupport
import EnsembleModel
import JSONDocument
import EventCodecs
import DataModel
@testable import MergeEngine

/// The state's two small indexes behave as the dictionaries they replaced: checked against a
/// dictionary on seeded random operations, across their thresholds (16 properties; identifiers
/// of 16 bytes, and canonical UUIDs). The orders and bytes the state is written in are checked
/// against orders and documents built here from its values.
@Suite("state indexes")
struct StateIndexTests {
    @Test("PairAnswers: each pair's own answer, however many share a slot of its small table")
    func pairAnswers() {
        // 300 pairs in 64 slots: most slots are shared, and asked in another order than set.
        var answers = StoreState.PairAnswers<Int?>()
        var expected: [Int64: Int?] = [:]
        var random = SplitMix64(seed: 11)
        for entity in Int64(0)..<15 {
            for property in Int64(0)..<20 {
                let key = entity << 32 | property
                #expect(answers.answer(key) == nil, "\(key) asked before it was answered")
                let value: Int? = random.next() % 4 == 0 ? nil : Int(random.next() % 1_000)
                answers.set(value, for: key)
                expected[key] = value
            }
        }
        for (key, value) in expected.sorted(by: { $0.key % 7 < $1.key % 7 || ($0.key % 7 == $1.key % 7 && $0.key < $1.key) }) {
            #expect(answers.answer(key) == .some(value), "\(key)")
        }
        #expect(answers.answer(99 << 32) == nil)
    }

    @Test("SmallMap: the same answers as a dictionary, with and without its index")
    func propertyValues() {
        var random = SplitMix64(seed: 7)
        for keys in [4, 16, 17, 200] {
            var values = SmallMap<Int32, Int>()
            var expected: [Int32: Int] = [:]
            for step in 0..<5_000 {
                let key = Int32(Int.random(in: 0..<keys, using: &random))
                switch Int.random(in: 0..<3, using: &random) {
                case 0: #expect(values.updateValue(step, forKey: key) == expected.updateValue(step, forKey: key))
                case 1: #expect(values.removeValue(forKey: key) == expected.removeValue(forKey: key))
                default: #expect(values[key] == expected[key])
                }
                #expect(values.count == expected.count)
            }
            #expect(Dictionary(uniqueKeysWithValues: values.map { ($0.key, $0.value) }) == expected)
        }
    }

    @Test("LiveIndex: identifiers apart by their exact bytes, short and long, several objects each")
    func liveIndex() {
        let base = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        let identifiers = [
            "", "a", base, base.lowercased(), base + "-1", String(repeating: "x", count: 40), String(repeating: "x", count: 41),
            String(repeating: "x", count: 39) + "y", "\u{e9}", "e\u{301}", base + "-12345-0000000123456789", base + "-12345-0000000123456788",
            // Canonical UUIDs are packed: neighbours by one digit, mixed case, a letter past F,
            // a misplaced dash, bytes above 0x7F and the characters beside the digits' and letters' ranges
            // (which would give a digit's value) stay apart.
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5E", "E621E1F8-C36C-495A-93FC-0C247A3E6E4F", "F621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "E621E1F8-C36C-495A-93FC-1C247A3E6E5F", "e621e1f8-C36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5G",
            "E621E1F8C-36C-495A-93FC-0C247A3E6E5F", "00000000-0000-0000-0000-000000000000", "0000000:-0000-0000-0000-000000000000",
            "0000000A-0000-0000-0000-000000000000", "0000000@-0000-0000-0000-000000000000", "00000009-0000-0000-0000-000000000000",
            "000000\u{e9}-0000-0000-0000-000000000000", "0000000J-0000-0000-0000-000000000000", "0000000j-0000-0000-0000-000000000000",
            // Each character just outside a range beside the one it would be taken for.
            "0000000/-0000-0000-0000-000000000000", "0000000F-0000-0000-0000-000000000000", "0000000`-0000-0000-0000-000000000000",
            "0000000g-0000-0000-0000-000000000000", "0000000G-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000001",
            "0000000`-0000-0000-0000-00000000000a", "00000009-0000-0000-0000-00000000000a", "0000000g-0000-0000-0000-00000000000a",
            "00000000-0000-0000-0000-00000000000a",
            // Raw identifiers: 9 to 16 bytes (the second word), and longer ones whose first 16
            // bytes agree (the whole text).
            "ABCDEFGH1", "ABCDEFGH2", "ABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOQ", "ABCDEFGHIJKLMNOP1", "ABCDEFGHIJKLMNOP2",
            "ABCDEFGHIJKLMNOP-0000-0000-0000-0000", "ABCDEFGHIJKLMNOP-0000-0000-0000-0001",
        ]
        var random = SplitMix64(seed: 11)
        churn(identifiers, steps: 3_000, using: &random)
    }

    @Test("a slot takes 64 bytes on a 64-bit platform (its two flags share the entity number's word)")
    func slotSize() {
        guard MemoryLayout<Int>.size == 8 else { return }
        #expect(MemoryLayout<StoreState.Slot>.stride == 64)
    }

    @Test("LiveIndex: a UUID probed by its 16 bytes (a binary table's) finds the object added by its upper-case text, and no other")
    func uuidHalves() {
        var random = SplitMix64(seed: 13)
        let fixed = ["00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "0123ABCD-4567-89EF-FEDC-BA9876543210"]
        let texts = fixed + (0..<200).map { _ in Self.randomUUID(using: &random).uppercased() }
        var index = LiveIndex()
        for (number, text) in texts.enumerated() { index.add(LiveIndex.probe(text), (0, Int32(number))) }
        // The lower-case text of a UUID with letters is another identifier (Spec/merge.md 7).
        index.add(LiveIndex.probe(fixed[2].lowercased()), (0, -2))
        for (number, text) in texts.enumerated() {
            // The halves as the binary reader takes them: the UUID's bytes, big-endian.
            let hex = text.filter { $0 != "-" }
            let high = UInt64(hex.prefix(16), radix: 16) ?? 0, low = UInt64(hex.suffix(16), radix: 16) ?? 0
            #expect(index.firstObject(LiveIndex.probe(upperCaseUUID: (high, low))) == Int32(number), "\(text)")
        }
    }

    @Test("LiveIndex: a small table under churn keeps apart identifiers that differ by case, length or a NUL byte")
    func liveIndexSmallTables() {
        // A table of 16 or 32 buckets, about three quarters used: runs of neighbouring buckets
        // wrap around its end and meet each other, so that emptying a bucket moves others back
        // across the end, and identifiers that pack alike (one UUID in both cases, bytes that
        // differ by a trailing NUL or by length) land in one run. The hash seed changes from
        // process to process, so each round adds random UUIDs to move the runs around.
        let uuid = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        let tricky = [
            "", "\u{0}", "a", "a\u{0}", "\u{0}a", "ABCDEFGHIJKLMNO", "ABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOP\u{0}", uuid, uuid.lowercased(),
            "e621e1f8-C36C-495A-93FC-0C247A3E6E5F", uuid + "\u{0}", String(uuid.dropLast()), "00000000-0000-0000-0000-000000000000",
        ]
        var random = SplitMix64(seed: 5)
        for _ in 0..<LongRun.count(40, long: 150) {
            churn(tricky + (0..<10).map { _ in Self.randomUUID(using: &random) }, steps: 1_000, using: &random)
        }
    }

    @Test("LiveIndex: the same pairs in the same order as a dictionary of lists, while its table grows and identifiers come and go")
    func liveIndexAtScale() {
        // Enough identifiers for the table to grow many times and hold long runs of neighbouring
        // buckets; each identifier is added to and removed from again and again, and at the end
        // every pair is removed. Canonical UUIDs in both cases (one UUID each time), raw
        // identifiers of 1 to 16 bytes, and longer ones that do not pack.
        var random = SplitMix64(seed: 29)
        var identifiers: [String] = []
        for index in 0..<6_000 {
            switch index % 4 {
            case 0: identifiers.append(Self.randomUUID(using: &random))
            case 1: identifiers.append(identifiers[index - 1].uppercased())
            case 2: identifiers.append(String(identifiers[index - 2].prefix(1 + index % 16)))
            default: identifiers.append(identifiers[index - 3] + "-\(index)")
            }
        }
        churn(identifiers, steps: LongRun.count(50_000, long: 200_000), emptying: true, using: &random)
    }

    private static func randomUUID(using random: inout SplitMix64) -> String {
        let hex = String((0..<32).map { _ in Array("0123456789abcdef")[Int.random(in: 0..<16, using: &random)] })
        return [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)].joined(separator: "-")
    }

    /// Adds and removes random pairs of `identifiers` in a new index and in a dictionary of
    /// lists keyed by the identifiers' bytes, and compares the pairs (entity and object, in
    /// order) of the identifier changed, and every so often of all of them; with `emptying`,
    /// removes every pair at the end and checks that none is left.
    private func churn(_ identifiers: [String], steps: Int, emptying: Bool = false, using random: inout SplitMix64) {
        var index = LiveIndex()
        var expected: [[UInt8]: [LiveIndex.Candidate]] = [:]
        func check(_ id: String, _ context: String) {
            let found = index[LiveIndex.probe(id)].map { $0.map { "\($0.entity):\($0.object)" } } ?? []
            #expect(found == (expected[Array(id.utf8)] ?? []).map { "\($0.entity):\($0.object)" }, "\(context), \(Array(id.utf8))")
        }
        for step in 0..<steps {
            // Adds win in the first half, removes in the second.
            let id = identifiers[Int.random(in: 0..<identifiers.count, using: &random)], key = Array(id.utf8)
            if Int.random(in: 0..<100, using: &random) < (step < steps / 2 ? 55 : 45) {
                let candidate = (entity: Int32.random(in: 0..<4, using: &random), object: Int32(step))
                index.add(LiveIndex.probe(id), candidate)
                expected[key, default: []].append(candidate)
            } else if let victim = expected[key]?.randomElement(using: &random) {
                index.remove(LiveIndex.probe(id), object: victim.object)
                expected[key]?.removeAll { $0.object == victim.object }
            }
            check(id, "step \(step)")
            if step % 97 == 0 { for other in identifiers.prefix(40) { check(other, "step \(step)") } }
        }
        for id in identifiers { check(id, "end") }
        guard emptying else { return }
        for id in identifiers {
            for candidate in expected[Array(id.utf8)] ?? [] { index.remove(LiveIndex.probe(id), object: candidate.object) }
            expected[Array(id.utf8)] = nil
        }
        for id in identifiers { check(id, "emptied") }
    }

    @Test("live objects come out by entity name, then identifier, in byte order, whatever their prefixes")
    func objectOrder() {
        let identifiers =
            [
                "", "a", "a\u{0}", "ab", "abcdefgh", "abcdefgh\u{0}", "abcdefghi", "abcdefgg", "abcdefgi", "\u{e9}", "e\u{301}", "Z", "zzzzzzzzzzzz",
                "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5E", "E621E1F7",
            ] + Self.besideUUIDs
        let entities = ["Note", "Tag", "N\u{e9}", "Ne"]
        var random = SplitMix64(seed: 5)
        var changes: [ObjectChange] = []
        for entity in entities {
            for id in identifiers.shuffled(using: &random) { changes.append(ObjectChange(entity: entity, globalIdentifier: id, type: .insert)) }
        }
        var state = StoreState(model: nil)
        state.apply(
            Event(
                uniqueIdentifier: "u", type: .save, storeIdentifier: "S", revision: 0, globalCount: 0, timestamp: 0,
                objectChanges: changes.shuffled(using: &random)))
        // The expected order compares byte arrays, not the state's keys.
        let expected = entities.flatMap { entity in identifiers.map { (entity, $0) } }.sorted { a, b in
            Array(a.0.utf8) != Array(b.0.utf8) ? Array(a.0.utf8).lexicographicallyPrecedes(b.0.utf8) : Array(a.1.utf8).lexicographicallyPrecedes(b.1.utf8)
        }
        let listed = state.objectsInOrder.map { ($0.entity, $0.id) }
        #expect(listed.count == expected.count)
        for (got, want) in zip(listed, expected) {
            #expect(Array(got.0.utf8) == Array(want.0.utf8) && Array(got.1.utf8) == Array(want.1.utf8), "\(got) vs \(want)")
        }
    }

    /// Identifiers with the first 8 bytes of one UUID: upper-case UUIDs that differ in either
    /// half (kept as their 16 bytes, compared by them), and texts that are not one (kept as
    /// text: lower or mixed case, a suffix, a character short, a character that is no digit).
    static let besideUUIDs = [
        "E621E1F8-C36C-495A-93FD-0C247A3E6E5F", "E621E1F8-C36D-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E60",
        "E621E1F8-0000-0000-0000-000000000000", "E621E1F8-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f",
        "E621E1F8-C36C-495A-93FC-0C247A3E6E5f", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F-1", "E621E1F8-C36C-495A-93FC-0C247A3E6E5",
        "E621E1F8zC36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5G",
    ]

    @Test("a deleted object's slot is taken by the next insert with either kind of identifier, and its identifier is forgotten")
    func slotReuse() throws {
        let uuids = ["E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "F621E1F8-C36C-495A-93FC-0C247A3E6E5F"]
        var state = StoreState(model: nil)
        func apply(_ revision: Int64, _ changes: [ObjectChange]) {
            state.apply(
                Event(
                    uniqueIdentifier: "u\(revision)", type: .save, storeIdentifier: "S", revision: revision, globalCount: revision, timestamp: 0,
                    objectChanges: changes))
        }
        apply(
            0, [ObjectChange(entity: "Note", globalIdentifier: uuids[0], type: .insert), ObjectChange(entity: "Note", globalIdentifier: "n-1", type: .insert)])
        apply(
            1, [ObjectChange(entity: "Note", globalIdentifier: uuids[0], type: .delete), ObjectChange(entity: "Note", globalIdentifier: "n-1", type: .delete)])
        // Free slots are taken last freed first: the UUID takes the text's slot, and the text
        // identifier the UUID's.
        apply(
            2,
            [
                ObjectChange(entity: "Note", globalIdentifier: uuids[1], type: .insert), ObjectChange(entity: "Note", globalIdentifier: "n-2", type: .insert),
                ObjectChange(
                    entity: "Tag", globalIdentifier: "t", type: .insert,
                    propertyChanges: [PropertyChange(name: "notes", value: .toMany(added: ["n-2", uuids[1], uuids[0], "n-1"], removed: []))]),
            ])
        #expect(state.slots.count == 3)
        #expect(state.objectsInOrder.map { "\($0.entity) \($0.id)" } == ["Note \(uuids[1])", "Note n-2", "Tag t"])
        #expect(!state.isLive(entity: "Note", id: uuids[0]) && !state.isLive(entity: "Note", id: "n-1"))
        #expect(state.isLive(entity: "Note", id: uuids[1]) && state.isLive(entity: "Note", id: "n-2"))
        #expect(state.textIdentifiers.values.sorted() == ["n-2", "t"])
        let document = try JSONParser.parse(try state.documentBytes())
        #expect(
            document.objectValue?["entities"]?.objectValue?["Tag"]?.objectValue?["t"]?.objectValue?["notes"] == .array([.string(uuids[1]), .string("n-2")]))
    }

    @Test("a to-many's members come out in identifier byte order, including many that share their first 8 bytes")
    func toManyMemberOrder() throws {
        var random = SplitMix64(seed: 11)
        var identifiers =
            [
                "", "a", "a\u{0}", "ab", "abcdefgh", "abcdefgh\u{0}", "abcdefghi", "abcdefgg", "abcdefgi", "\u{e9}", "e\u{301}", "Z",
                "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5E", "E621E1F7",
            ] + Self.besideUUIDs
        // A run longer than any small-sort threshold, all with one 8-byte prefix, and as many
        // UUIDs with another.
        for _ in 0..<100 {
            identifiers.append(String(format: "E621E1F8-%04X-%04X-%04X-%012llX", random.next() % 3, random.next() % 3, random.next() % 3, random.next() % 5))
        }
        for _ in 0..<100 { identifiers.append("abcdefgh" + String(random.next() % 1_000_000)) }
        identifiers = Array(Set(identifiers.map(ExactString.init))).map(\.value)
        var changes = identifiers.shuffled(using: &random).map { ObjectChange(entity: "Tag", globalIdentifier: $0, type: .insert) }
        changes.append(
            ObjectChange(
                entity: "Note", globalIdentifier: "holder", type: .insert,
                propertyChanges: [PropertyChange(name: "tags", value: .toMany(added: identifiers.shuffled(using: &random), removed: []))]))
        var state = StoreState(model: nil)
        state.apply(Event(uniqueIdentifier: "u", type: .save, storeIdentifier: "S", revision: 0, globalCount: 0, timestamp: 0, objectChanges: changes))
        let document = try JSONParser.parse(try state.documentBytes())
        let written = document.objectValue?["entities"]?.objectValue?["Note"]?.objectValue?["holder"]?.objectValue?["tags"]?.arrayValue
        // The expected order compares byte arrays, not the state's keys.
        let expected = identifiers.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(written?.map { Array(($0.stringValue ?? "-").utf8) } == expected)
    }

    static let pieceEntities = ["", "A\"b", "\u{1}x", "\u{e9}t\u{e9}", "Plain"]

    /// The state of one save event with these changes.
    static func state(inserting changes: [ObjectChange]) -> StoreState {
        var state = StoreState(model: nil)
        state.apply(Event(uniqueIdentifier: "u", type: .save, storeIdentifier: "S", revision: 0, globalCount: 0, timestamp: 0, objectChanges: changes))
        return state
    }

    /// A state of more objects than one piece of 2,048 (or 4,096), so that pieces and their
    /// entity boundaries are written by several threads, with names that need escapes.
    static func stateInPieces() -> StoreState {
        let entities = pieceEntities
        let names = ["", "q\"uote", "back\\slash", "\u{7}", "n\u{e9}", "z"]
        var random = SplitMix64(seed: 3)
        var ids: [String] = []
        var changes: [ObjectChange] = []
        for number in 0..<5_000 {
            let id = "id-\(random.next() % 100)-\(number)"
            let earlier = (0..<4).compactMap { _ in ids.isEmpty ? nil : ids[Int(random.next() % UInt64(ids.count))] }
            let values: [PropertyChange.Value] = [
                .attribute(.string("text \"\(number)\"\n")), .attribute(.integer(Int64(number) - 2_500)), .attribute(.double(Double(number) / 4)),
                .attributeInDataFile(filename: "blob-\(number)"), .toMany(added: earlier, removed: []), .toMany(added: [], removed: []),
                .orderedToMany(added: earlier, removed: [], movedByIndex: earlier.isEmpty ? [:] : [0: earlier[earlier.count - 1]]),
                .toOne(relatedIdentifier: earlier.first),
            ]
            let properties = names.indices.map { PropertyChange(name: names[$0], value: values[(number + $0) % values.count]) }
            changes.append(ObjectChange(entity: entities[number % entities.count], globalIdentifier: id, type: .insert, propertyChanges: properties))
            ids.append(id)
        }
        return state(inserting: changes)
    }

    @Test("the state document has the bytes of its values, over several pieces, with names that need escapes")
    func documentFromValues() throws {
        let entities = Self.pieceEntities
        let state = Self.stateInPieces()
        // The expected document goes through each object's values as JSON (their own sort of
        // identifiers) and the general writer, not through the state's document writer.
        var byEntity: [String: [(String, JSONValue)]] = [:]
        for object in state.objectsInOrder {
            let properties = try #require(try state.properties(entity: object.entity, id: object.id))
            byEntity[object.entity, default: []].append((object.id, .object(JSONObject(properties.map { ($0.name, $0.value) }))))
        }
        let expected = JSONValue.object(JSONObject([("entities", .object(JSONObject(byEntity.map { ($0.key, .object(JSONObject($0.value))) })))]))
        #expect(byEntity.count == entities.count && state.liveObjectCount == 5_000)
        #expect(try state.documentBytes() == JSONWriter().bytes(expected))
    }

    @Test("the state document resumes where its writer stopped, at the end of a batch of 16,384 objects")
    func documentResumed() throws {
        let changes = (0..<40_000).map { number in
            ObjectChange(
                entity: number % 3 == 0 ? "A" : "B", globalIdentifier: "o\(number)", type: .insert,
                propertyChanges: [PropertyChange(name: "n", value: .attribute(.integer(Int64(number))))])
        }
        var state = StoreState(model: nil)
        state.apply(Event(uniqueIdentifier: "u", type: .save, storeIdentifier: "S", revision: 0, globalCount: 0, timestamp: 0, objectChanges: changes))
        // Asked to stop at every piece: the writer stops after each batch, and each resumption
        // goes on from the next object, without writing the document's opening again.
        var parts: [UInt8] = []
        var stops: [Int] = []
        var next: Int? = 0
        while let start = next {
            next = try state.writeDocument(resumingAt: start) { bytes in
                parts += bytes
                return false
            }
            if let next { stops.append(next) }
        }
        #expect(stops == [16_384, 32_768])
        #expect(parts == (try state.documentBytes()))
    }

    @Test("a state that keeps the values changes replace hands each over once, and applies as one that does not")
    func replacedValues() throws {
        func update(_ value: AttributeValue, _ count: Int64, type: ChangeType = .update) -> Event {
            let change = ObjectChange(
                entity: "E", globalIdentifier: "x", type: type,
                propertyChanges: [PropertyChange(name: "a", value: .attribute(value)), PropertyChange(name: "b", value: .attribute(.integer(count)))])
            return Event(
                uniqueIdentifier: "u\(count)", type: .save, storeIdentifier: "S", revision: count, globalCount: count, timestamp: 0, objectChanges: [change])
        }
        let events = [update(.string("one"), 0, type: .insert), update(.string("two"), 1), update(.string("three"), 2)]
        var keeping = StoreState(model: nil), releasing = StoreState(model: nil)
        keeping.keepsReplaced = true
        for event in events {
            keeping.apply(event)
            releasing.apply(event)
        }
        #expect(keeping.keepsReplaced && !releasing.keepsReplaced)
        // Two updates replaced two values each (the insert replaced none).
        #expect(keeping.takeReplaced().count == 4)
        #expect(keeping.takeReplaced().count == 0)
        #expect(releasing.takeReplaced().count == 0)
        #expect(try keeping.documentBytes() == releasing.documentBytes())
        keeping.keepsReplaced = false
        keeping.apply(update(.string("four"), 3))
        #expect(keeping.takeReplaced().count == 0)
    }

    @Test("a baseline's changes made in pieces on several threads: an insert per live object in document order, entity runs, and they rebuild the state")
    func baselineInPieces() throws {
        let state = Self.stateInPieces()
        let runs = state.baselineChanges()
        let changes = runs.all()
        // Listed one object at a time by `objectsInOrder`, not in pieces.
        let objects = state.objectsInOrder
        #expect(changes.count == objects.count && objects.count == 5_000 && runs.count == 5_000)
        for (change, object) in zip(changes, objects) {
            #expect(
                exactlyEqual(change.entity, object.entity) && exactlyEqual(change.globalIdentifier, object.id) && change.type == .insert
                    && exactlyEqual(change.propertyChanges.map(\.name), object.properties.map(\.name)), "\(change.entity) \(change.globalIdentifier)")
        }
        // One run per entity, in the objects' order, each as long as its objects.
        var expectedRuns: [(name: String, count: Int)] = []
        for object in objects {
            if expectedRuns.last?.name == object.entity { expectedRuns[expectedRuns.count - 1].count += 1 } else { expectedRuns.append((object.entity, 1)) }
        }
        #expect(expectedRuns.count > 1)
        #expect(runs.entities.map(\.name) == expectedRuns.map(\.name) && runs.entities.map(\.count) == expectedRuns.map(\.count))
        // Any range is the same changes, wherever it starts.
        #expect(runs.changes(1_234..<2_345).map(\.globalIdentifier) == changes[1_234..<2_345].map(\.globalIdentifier))
        var rebuilt = StoreState(model: nil)
        rebuilt.apply(
            Event(
                uniqueIdentifier: "B", type: .baseline, storeIdentifier: "S", globalCount: 1, timestamp: 0, modelVersion: nil,
                revisionSet: RevisionSet(["S": 0]), objectChanges: changes))
        #expect(try rebuilt.documentBytes() == state.documentBytes())
    }
    /// Objects named by upper-case UUIDs (kept as their halves), lower-case ones and other text,
    /// whose strings are also values, data file names and relationship members.
    static func stateWithUUIDs() -> StoreState {
        var random = SplitMix64(seed: 8)
        var ids: [String] = []
        var changes: [ObjectChange] = []
        for number in 0..<3_000 {
            let uuid = String(format: "%08X-1A2B-4C3D-8E9F-%012X", UInt32(truncatingIfNeeded: random.next()), number)
            let id = number % 5 == 0 ? "text-\(number)" : number % 5 == 1 ? uuid.lowercased() : uuid
            let earlier = (0..<3).compactMap { _ in ids.isEmpty ? nil : ids[Int(random.next() % UInt64(ids.count))] }
            let moved = Dictionary(earlier.enumerated().map { ($0.offset, $0.element) }) { a, _ in a }
            var properties = [
                PropertyChange(name: "name", value: .attribute(.string(earlier.first ?? id))),
                PropertyChange(name: "link", value: .attribute(.url(id))),
                PropertyChange(name: "tags", value: .toMany(added: earlier, removed: [])),
                PropertyChange(name: "parent", value: .toOne(relatedIdentifier: earlier.last)),
                PropertyChange(name: "order", value: .orderedToMany(added: earlier, removed: [], movedByIndex: moved)),
            ]
            if number % 4 == 0 { properties.append(PropertyChange(name: "blob", value: .attributeInDataFile(filename: earlier.first ?? "blob"))) }
            // A change that lists its data files out of order and one twice.
            if number % 9 == 0 {
                properties += [
                    PropertyChange(name: "file", value: .attributeInDataFile(filename: "zz-\(number % 3)")),
                    PropertyChange(name: "other", value: .attributeInDataFile(filename: "aa-\(number % 5)")),
                    PropertyChange(name: "same", value: .attributeInDataFile(filename: "zz-\(number % 3)")),
                ]
            }
            changes.append(ObjectChange(entity: number % 3 == 0 ? "Zed" : "Able", globalIdentifier: id, type: .insert, propertyChanges: properties))
            ids.append(id)
        }
        return state(inserting: changes)
    }

    /// Two objects with one identifier, a Cat and a Dog (sub-entities of Animal), both in one
    /// owner's to-many and ordered to-many through the inverses of their to-ones (Spec/merge.md
    /// 8.8): a baseline's lists name "x" once.
    static func stateWithTwins() throws -> StoreState {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Animal" representedClassName="Animal" syncable="YES">
                    <relationship name="owner" optional="YES" maxCount="1" destinationEntity="Owner" inverseName="pets" inverseEntity="Owner"/>
                    <relationship name="waiting" optional="YES" maxCount="1" destinationEntity="Owner" inverseName="queue" inverseEntity="Owner"/>
                </entity>
                <entity name="Cat" representedClassName="Cat" parentEntity="Animal" syncable="YES"/>
                <entity name="Dog" representedClassName="Dog" parentEntity="Animal" syncable="YES"/>
                <entity name="Owner" representedClassName="Owner" syncable="YES">
                    <relationship name="pets" optional="YES" toMany="YES" destinationEntity="Animal" inverseName="owner" inverseEntity="Animal"/>
                    <relationship name="queue" optional="YES" toMany="YES" ordered="YES" destinationEntity="Animal" inverseName="waiting" inverseEntity="Animal"/>
                </entity>
            </model>
            """
        let held = ["owner", "waiting"].map { PropertyChange(name: $0, value: .toOne(relatedIdentifier: "o")) }
        var state = StoreState(model: try ModelXMLReader.parse(Data(xml.utf8), displayPath: "contents", versionName: nil))
        state.apply(
            Event(
                uniqueIdentifier: "u", type: .save, storeIdentifier: "S", revision: 0, globalCount: 0, timestamp: 0,
                objectChanges: [
                    ObjectChange(entity: "Owner", globalIdentifier: "o", type: .insert),
                    ObjectChange(entity: "Cat", globalIdentifier: "x", type: .insert, propertyChanges: held),
                    ObjectChange(entity: "Dog", globalIdentifier: "x", type: .insert, propertyChanges: held),
                ]))
        return state
    }

    @Test("a baseline's changes as one numbered event: the binary file of the changes made as strings, and it rebuilds the state")
    func baselineNumbered() throws {
        for state in [Self.stateInPieces(), Self.stateWithUUIDs(), try Self.stateWithTwins()] {
            let runs = state.baselineChanges()
            let make = try #require(runs.numbered)
            let numbered = make()
            let header = Event(
                uniqueIdentifier: "B", type: .baseline, storeIdentifier: "S", globalCount: 1, timestamp: 0, modelVersion: nil,
                revisionSet: RevisionSet(["S": 0]), objectChanges: [])
            var event = header
            event.objectChanges = runs.all()
            #expect(numbered.changes.count == state.liveObjectCount)
            let same = try V2BinaryEncoder().encode(header: header, numbered: numbered) == V2BinaryEncoder().encode(event)
            #expect(same)
            // Relationship lists in string order, each member once, as a numbered event holds them.
            for property in numbered.properties where property.kind == .toMany || property.kind == .orderedToMany {
                let added = numbered.identifiers[Int(property.first)..<Int(property.first + property.added)]
                #expect(zip(added, added.dropFirst()).allSatisfy { numbered.precedes($0, $1) })
            }
            // Applied, as the changes made as strings apply; without a model, that is the state
            // (the twins' owner cannot name both of them in a baseline: a rebase refuses it).
            var rebuilt = StoreState(model: state.dataModel), fromStrings = StoreState(model: state.dataModel)
            rebuilt.apply(numbered)
            fromStrings.apply(event)
            #expect(try rebuilt.documentBytes() == fromStrings.documentBytes())
            if state.dataModel == nil { #expect(try rebuilt.documentBytes() == state.documentBytes()) }
        }
    }
}
