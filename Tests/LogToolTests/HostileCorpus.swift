import Deflate
import Foundation
import EventCodecs
import FileWrappers

/// The hostile corpus of issue 14: files of under 1 MiB each (on disk) built to make a reader
/// allocate or compute without bound. Generated at test time, deterministically, into a cloud
/// folder `<root>/MainStore/{events,baselines,data,stores}`; nothing binary is committed.
///
/// Every entry writes a whole ensemble folder: its hostile file, the registration of the store
/// `STORE-01` (unless the hostile file is that registration) and, for data files and
/// registrations, one small event that refers to the data file and inserts `Item` `x`.
struct CorpusEntry: Sendable, CustomStringConvertible {
    enum Folder: String, Sendable { case events, baselines, data, stores }

    var name: String
    /// The folder the hostile file goes in; its name there.
    var folder: Folder
    var fileName: String
    /// Written as a v1 file (the commands need `--model`).
    var v1 = false
    /// JSON text (`validate` applies to the file on its own).
    var json = true
    /// A sparse file: its size is far above 1 MiB, its blocks on disk are not.
    var sparse = false
    /// The object `history` asks for; nil when the folder has no object worth asking for.
    var history: (entity: String, id: String)? = ("Item", "x")
    /// The hostile content is this one file (false: many files, none hostile alone).
    var single = true
    /// The code `inspect` gives for the file and text every command's output holds, when every
    /// command must refuse it for one limit (exit 1).
    var refusedWith: (code: String, text: String)?
    /// Writes the hostile file (or files) into the ensemble folder.
    var write: @Sendable (_ ensemble: URL) throws -> Void

    var description: String { name }
    /// The hostile file's path relative to the ensemble folder.
    var relativePath: String { "\(folder.rawValue)/\(fileName)" }
    /// The file is also given to the commands on its own (single event files and baselines are).
    var loose: Bool { single && (folder == .events || folder == .baselines) }
}

enum HostileCorpus {
    static let store = "STORE-01"
    static let eventName = "0_STORE-01_0.cdeevent"
    static let mebibyte = 1 << 20

    static let entries: [CorpusEntry] = [
        CorpusEntry(name: "binary-bomb-2M-changes", folder: .events, fileName: eventName, json: false) { ensemble in
            // 32,000 matches of 258 bytes: 2,064,001 changes of 4 bytes, 8 MB inflated, 12 KB stored.
            try write(binaryBomb(matches: 32_000), to: ensemble, eventName)
        },
        CorpusEntry(name: "binary-bomb-inflates-255MiB", folder: .events, fileName: eventName, json: false) { ensemble in
            // Just under the 256 MiB payload limit at a ratio of 688 (under 1000): 67 million changes.
            try write(binaryBomb(matches: 1_040_000), to: ensemble, eventName)
        },
        CorpusEntry(name: "v1-500k-numbers", folder: .events, fileName: eventName, v1: true) { ensemble in
            // One array of 500,000 numbers where change objects belong: a million schema violations.
            var text = #"{"store":"STORE-01","revision":0,"timestamp":0,"changes":["#
            text += Array(repeating: "0", count: 500_000).joined(separator: ",")
            try write(Array((text + "]}").utf8), to: ensemble, eventName)
        },
        CorpusEntry(name: "v2-100k-unknown-members", folder: .events, fileName: eventName) { ensemble in
            let members = (0..<100_000).map { #""\#(base62($0))":0"# }.joined(separator: ",")
            try write(v2Event(extra: "," + members), to: ensemble, eventName)
        },
        CorpusEntry(name: "v2-depth-64-x7000", folder: .events, fileName: eventName) { ensemble in
            // The event is depth 1, "deep" depth 2, each element reaches exactly depth 64.
            let element = String(repeating: "[", count: 62) + String(repeating: "]", count: 62)
            try write(v2Event(extra: #","deep":["# + Array(repeating: element, count: 7_000).joined(separator: ",") + "]"), to: ensemble, eventName)
        },
        CorpusEntry(name: "v2-depth-1M", folder: .events, fileName: eventName) { ensemble in
            try write(Array(repeating: UInt8(ascii: "["), count: 1_000_000), to: ensemble, eventName)
        },
        CorpusEntry(name: "v2-string-of-escapes", folder: .events, fileName: eventName) { ensemble in
            // 952 KB of escapes (surrogate pairs among them) that decode to 374 KB.
            let chunk = #"\ud83d\ude00\n\"\\\/\t\u00e9"#
            let value = String(repeating: chunk, count: 34_000)
            try write(v2Event(properties: #"{"propertyName":"title","type":0,"value":""# + value + #""}"#), to: ensemble, eventName)
        },
        CorpusEntry(name: "v2-to-many-100k-added", folder: .events, fileName: eventName, history: ("Note", "owner")) { ensemble in
            let added = (0..<100_000).map { #""\#(base62($0))""# }.joined(separator: ",")
            let change = #"{"globalIdentifier":"owner","type":100,"properties":[{"propertyName":"linkedPhotos","type":2,"addedIdentifiers":["#
            try write(v2Event(changes: #"{"Note":["# + change + added + #"],"removedIdentifiers":[]}]}]}"#), to: ensemble, eventName)
        },
        CorpusEntry(name: "v2-revision-set-100k", folder: .events, fileName: eventName) { ensemble in
            let stores = (0..<100_000).map { #""\#(base62($0))":0"# }.joined(separator: ",")
            try write(v2Event(revisions: #"{"STORE-01":0,"# + stores + "}"), to: ensemble, eventName)
        },
        CorpusEntry(name: "v2-duplicate-key-after-100k", folder: .events, fileName: eventName) { ensemble in
            // 100,000 distinct members, then the first one again: found only with all keys in hand.
            let members = (0..<100_000).map { #""\#(base62($0))":0"# }.joined(separator: ",")
            try write(v2Event(extra: "," + members + #","0":1"#), to: ensemble, eventName)
        },
        CorpusEntry(name: "v2-huge-exponent-header", folder: .events, fileName: eventName) { ensemble in
            let text =
                #"{"uniqueIdentifier":"U","type":2e999999999,"globalCount":1e999999999,"timestamp":"1e999999999","#
                + #""storeIdentifier":"STORE-01","revisionsByStoreIdentifier":{"STORE-01":1e999999999},"changesByEntity":{"Item":["#
                + #"{"globalIdentifier":"x","type":100,"properties":[{"propertyName":"rating","type":0,"value":1e999999999}]}]}}"#
            try write(Array(text.utf8), to: ensemble, eventName)
        },
        CorpusEntry(name: "v2-huge-numbers-kept", folder: .events, fileName: eventName) { ensemble in
            // Unknown members are kept exactly: 50,000 numbers of a billion-digit exponent and
            // 300 integers of 999 digits, which a writer must not expand.
            let exponents = ["1e999999999", "-1E+999999999", "1e-999999999", "0e999999999", "12.5e999999990"]
            let huge = (0..<50_000).map { exponents[$0 % exponents.count] }.joined(separator: ",")
            let long = Array(repeating: "9" + String(repeating: "0", count: 998), count: 300).joined(separator: ",")
            try write(v2Event(extra: #","huge":["# + huge + #"],"long":["# + long + "]"), to: ensemble, eventName)
        },
        CorpusEntry(name: "baseline-26k-objects", folder: .baselines, fileName: "0_BASE_STORE-01.cdeevent", history: ("Item", "0")) { ensemble in
            let objects = (0..<26_000).map { #"{"globalIdentifier":"\#(base62($0))","type":100}"# }.joined(separator: ",")
            let text =
                #"{"uniqueIdentifier":"BASE","type":100,"globalCount":0,"timestamp":"0","storeIdentifier":"STORE-01","#
                + #""revisionsByStoreIdentifier":{"STORE-01":0},"changesByEntity":{"Item":["# + objects + "]}}"
            try write(Array(text.utf8), to: ensemble, "0_BASE_STORE-01.cdeevent", in: .baselines)
        },
        CorpusEntry(name: "20k-event-files", folder: .events, fileName: "19999_S_19999.cdeevent", json: false, history: nil, single: false) { ensemble in
            // 20,000 binary events of one store S, about 53 bytes each.
            let events = ensemble.appendingPathComponent("events").path
            for index in 0..<20_000 {
                try writeFile(tinyBinaryEvent(index), atPath: "\(events)/\(index)_S_\(index).cdeevent")
            }
            try registration("S", to: ensemble)
        },
        CorpusEntry(name: "blob-deflate-ratio-1000", folder: .data, fileName: "BLOB-RATIO", json: false) { ensemble in
            try write(blobRatioBomb(), to: ensemble, "BLOB-RATIO", in: .data)
            try write(v2Event(dataFile: "BLOB-RATIO"), to: ensemble, eventName)
        },
        CorpusEntry(name: "blob-container-2GiB-sparse", folder: .data, fileName: "BLOB-SPARSE", json: false, sparse: true) { ensemble in
            var header = blobMagic + [1, 0]
            header += littleEndian(UInt64(2) << 30 - 50)
            header += [UInt8](repeating: 0, count: 32)
            try sparseFile(header, size: 2 << 30, at: ensemble.appendingPathComponent("data/BLOB-SPARSE"))
            try write(v2Event(dataFile: "BLOB-SPARSE"), to: ensemble, eventName)
        },
        CorpusEntry(name: "raw-data-2GiB-sparse", folder: .data, fileName: "RAW-SPARSE", json: false, sparse: true) { ensemble in
            try sparseFile(Array("raw".utf8), size: 2 << 30, at: ensemble.appendingPathComponent("data/RAW-SPARSE"))
            try write(v2Event(dataFile: "RAW-SPARSE"), to: ensemble, eventName)
        },
        // Issue 33: files within every wrapper limit (zip ratio under 100, binary under 4 changes
        // per byte) whose content decodes to millions of values; refused by the value budget of
        // their size as stored (Spec/README.md 6.2).
        CorpusEntry(
            name: "zip-v1-44M-numbers", folder: .events, fileName: eventName, v1: true, json: false, refusedWith: ("json.too-large", "bytes as stored")
        ) { ensemble in
            // 88 MB of "0," with a "1" every 65 numbers on average, zipped 90 times to 975 KB.
            try write(ZipArchive.write(name: eventName, content: v1Numbers(44_000_000)), to: ensemble, eventName)
        },
        CorpusEntry(name: "zip-v2-1.8M-inserts", folder: .events, fileName: eventName, json: false, refusedWith: ("json.too-large", "bytes as stored")) {
            ensemble in
            // 67 MB of inserts of four objects, zipped 71 times to 932 KB.
            try write(ZipArchive.write(name: eventName, content: v2Inserts(1_800_000)), to: ensemble, eventName)
        },
        CorpusEntry(
            name: "binary-3.9M-changes-ratio-16", folder: .events, fileName: eventName, json: false, refusedWith: ("binary.too-large", "bytes as stored")
        ) { ensemble in
            // 15.6 MB of changes deflated 16 times to 982 KB: 3.97 changes per byte of the file.
            try write(binaryChanges(3_900_000), to: ensemble, eventName)
        },
        CorpusEntry(name: "store-bplist-dag-2^50", folder: .stores, fileName: store, json: false) { ensemble in
            // 50 arrays, each holding the next one twice: 2^50 arrays if references are copied.
            let arrays: [[UInt8]] = (0..<50).map { level in
                let next = UInt8(7 + level)
                return level == 49 ? [0xA0] : [0xA2, next, next]
            }
            try write(binaryRegistration(bomb: arrays, referenceSize: 1), to: ensemble, store, in: .stores)
            try write(v2Event(), to: ensemble, eventName)
        },
        CorpusEntry(name: "store-bplist-100k-deep", folder: .stores, fileName: store, json: false) { ensemble in
            // 100,000 arrays nested in one another.
            let arrays: [[UInt8]] = (0..<100_000).map { level in level == 99_999 ? [0xA0] : [0xA1] + bigEndian(UInt64(7 + level), bytes: 4) }
            try write(binaryRegistration(bomb: arrays, referenceSize: 4), to: ensemble, store, in: .stores)
            try write(v2Event(), to: ensemble, eventName)
        },
        CorpusEntry(name: "store-bplist-cycle", folder: .stores, fileName: store, json: false) { ensemble in
            try write(binaryRegistration(bomb: [[0xA1, 6]], referenceSize: 1), to: ensemble, store, in: .stores)
            try write(v2Event(), to: ensemble, eventName)
        },
        CorpusEntry(name: "store-xml-plist-entities", folder: .stores, fileName: store, json: false) { ensemble in
            // The billion laughs: ten entities, each ten of the one before.
            var entities = #"<!ENTITY a "aaaaaaaaaa">"#
            let letters = Array("abcdefghij")
            for index in 1..<letters.count {
                entities += #"<!ENTITY \#(letters[index]) ""# + String(repeating: "&\(letters[index - 1]);", count: 10) + #"">"#
            }
            let text =
                #"<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE plist [\#(entities)]><plist version="1.0"><dict>"#
                + "<key>leechDate</key><date>2024-03-01T09:00:00Z</date><key>storeIdentifier</key><string>STORE-01</string>"
                + "<key>bomb</key><string>&j;</string></dict></plist>"
            try write(Array(text.utf8), to: ensemble, store, in: .stores)
            try write(v2Event(), to: ensemble, eventName)
        },
    ]

    /// Writes the entry's folder into `root/MainStore` and returns the ensemble folder.
    static func materialize(_ entry: CorpusEntry, in root: URL) throws -> URL {
        let ensemble = root.appendingPathComponent("MainStore")
        for folder in ["events", "baselines", "data", "stores"] {
            try FileManager.default.createDirectory(at: ensemble.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try entry.write(ensemble)
        if !FileManager.default.fileExists(atPath: ensemble.appendingPathComponent("stores/\(store)").path) {
            try registration(store, to: ensemble)
        }
        return ensemble
    }

    // MARK: - JSON events

    /// A v2 save event of `STORE-01` at revision 0 that inserts `Item` `x`.
    static func v2Event(extra: String = "", revisions: String? = nil, changes: String? = nil, properties: String? = nil, dataFile: String? = nil) -> [UInt8] {
        let property =
            properties ?? dataFile.map { #"{"propertyName":"payload","type":0,"filename":"\#($0)"}"# }
            ?? #"{"propertyName":"title","type":0,"value":"t"}"#
        let files = dataFile.map { #","dataFiles":["\#($0)"]"# } ?? ""
        let changesByEntity = changes ?? #"{"Item":[{"globalIdentifier":"x","type":100\#(files),"properties":[\#(property)]}]}"#
        let text =
            #"{"uniqueIdentifier":"U","type":200,"globalCount":0,"timestamp":"0","storeIdentifier":"STORE-01","#
            + #""revisionsByStoreIdentifier":\#(revisions ?? #"{"STORE-01":0}"#),"changesByEntity":\#(changesByEntity)\#(extra)}"#
        return Array(text.utf8)
    }

    /// A 64-bit linear congruential generator (Knuth's MMIX constants): the hostile files of
    /// issue 33 need some entropy, so that deflate stays under the ratio limit.
    static func next(_ state: inout UInt64) -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state
    }

    /// A v1 event whose `changes` are `count` numbers: 0, and 1 after gaps of 1 to 128.
    static func v1Numbers(_ count: Int) -> [UInt8] {
        var numbers = repeated(Array("0,".utf8), count)
        numbers.removeLast()
        var state: UInt64 = 42
        var index = 1 + Int(next(&state) >> 57)
        while index < count {
            numbers[2 * index] = UInt8(ascii: "1")
            index += 1 + Int(next(&state) >> 57)
        }
        return Array(#"{"store":"STORE-01","revision":0,"timestamp":0,"changes":["#.utf8) + numbers + Array("]}".utf8)
    }

    /// A v2 save event of `count` inserts of `Item` `xa`, `xb`, `xc` or `xd`, picked at random.
    static func v2Inserts(_ count: Int) -> [UInt8] {
        var state: UInt64 = 1
        // The event with the changes of its entity left open: `... "changesByEntity":{"Item":[`.
        let bytes = Array(v2Event(changes: #"{"Item":["#).dropLast())
        // The four inserts, each after a comma (the first one's is dropped), copied in whole.
        let inserts = ["a", "b", "c", "d"].map { Array(#",{"globalIdentifier":"x\#($0)","type":100}"#.utf8) }
        let size = inserts[0].count
        let changes = [UInt8](unsafeUninitializedCapacity: count * size) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            for index in 0..<count {
                inserts[Int(next(&state) >> 62)].withUnsafeBytes {
                    UnsafeMutableRawPointer(base + index * size).copyMemory(from: $0.baseAddress!, byteCount: size)
                }
            }
            initialized = count * size
        }
        return bytes + changes.dropFirst() + Array("]}}".utf8)
    }

    /// A binary save event of `count` deletes of `Item` `a` (two in three) or of one of `a`...`d`.
    static func binaryChanges(_ count: Int) -> [UInt8] {
        // Strings, sorted by their UTF-8 bytes: 0 Item, 1 STORE-01, 2 U-BOMB, 3 a ... 6 d.
        let strings = ["Item", "STORE-01", "U-BOMB", "a", "b", "c", "d"]
        let head = varint(1) + varint(0) + varint(UInt64(count))
        // Each change is 0x64, the object's string, 0, 0: only the object is drawn.
        var payload = head + repeated([0x64, 3, 0, 0], count)
        var state: UInt64 = 7
        payload.withUnsafeMutableBufferPointer { changes in
            for index in 0..<count {
                let random = next(&state)
                if random >> 56 < 90 { changes[head.count + 4 * index + 1] = 3 + UInt8((random >> 8) & 3) }
            }
        }
        let stored = Zlib.deflateForStorage(payload) ?? payload
        return binaryFile([(1, 0, stringTable(strings)), (2, 0, binaryHeader(uid: 2, type: 200, globalCount: 0, store: 1, revision: 0)), (3, 1, stored)])
    }

    /// `pattern` `count` times. The three generators above build their files from whole runs
    /// and copies, not byte by byte: element by element, the suite's debug build took 20-40 s
    /// for each of their entries.
    static func repeated(_ pattern: [UInt8], _ count: Int) -> [UInt8] {
        let total = pattern.count * count
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            guard let base = buffer.baseAddress, total > 0 else { return }
            pattern.withUnsafeBytes { UnsafeMutableRawPointer(base).copyMemory(from: $0.baseAddress!, byteCount: pattern.count) }
            var filled = pattern.count
            while filled < total {
                let step = min(filled, total - filled)
                UnsafeMutableRawPointer(base + filled).copyMemory(from: base, byteCount: step)
                filled += step
            }
            initialized = total
        }
    }

    static func registration(_ store: String, to ensemble: URL) throws {
        let text =
            #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>leechDate</key>"#
            + "<date>2024-03-01T09:00:00Z</date><key>storeIdentifier</key><string>\(store)</string></dict></plist>"
        try write(Array(text.utf8), to: ensemble, store, in: .stores)
    }

    /// Short distinct names in ASCII order: 0-9, A-Z, a-z, then two and three characters.
    static let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    static func base62(_ number: Int) -> String {
        var number = number
        var result = [digits[number % 62]]
        number /= 62
        while number > 0 {
            result.insert(digits[number % 62], at: 0)
            number /= 62
        }
        return String(result)
    }

    // MARK: - Binary events (Spec/v2-binary.md)

    /// A binary save event of `STORE-01` whose deflated changes section holds one insert of
    /// `Item` `x` and then `matches` × 258 bytes that repeat it: 1 + 64.5 × matches changes.
    static func binaryBomb(matches: Int) -> [UInt8] {
        // Strings, sorted by their UTF-8 bytes: 0 Item, 1 STORE-01, 2 U-BOMB, 3 x.
        let strings = ["Item", "STORE-01", "U-BOMB", "x"]
        let changeCount = 1 + 258 * matches / 4
        var prefix = varint(1) + varint(0) + varint(UInt64(changeCount))
        prefix += [0x64, 3, 0, 0]  // insert (100), x, no data files, no properties
        let stored = RepeatingDeflate.stream(prefix: prefix, distance: 4, matches: matches, lengthCodeBits: 2)
        return binaryFile([
            (1, 0, stringTable(strings)), (2, 0, binaryHeader(uid: 2, type: 200, globalCount: 0, store: 1, revision: 0)), (3, 1, stored),
        ])
    }

    /// The smallest save event of store S: no changes, identifier `e<index in base 62>`.
    static func tinyBinaryEvent(_ index: Int) -> [UInt8] {
        let strings = ["S", "e" + base62(index)]
        let header = binaryHeader(uid: 1, type: 200, globalCount: UInt64(index), store: 0, revision: UInt64(index))
        return binaryFile([(1, 0, stringTable(strings)), (2, 0, header)])
    }

    static func stringTable(_ strings: [String]) -> [UInt8] {
        strings.reduce(varint(UInt64(strings.count))) { table, string in table + varint(UInt64(string.utf8.count * 2)) + Array(string.utf8) }
    }

    static func binaryHeader(uid: UInt64, type: UInt64, globalCount: UInt64, store: UInt64, revision: UInt64) -> [UInt8] {
        varint(uid) + varint(type) + varint(globalCount) + [UInt8](repeating: 0, count: 8) + varint(store) + varint(0) + varint(1) + varint(store)
            + varint(revision)
    }

    static func binaryFile(_ sections: [(type: UInt64, flags: UInt64, stored: [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = [0x89, 0x45, 0x4E, 0x53, 0x0D, 0x0A, 0x1A, 0x0A, 2, 0]
        for section in sections {
            bytes += varint(section.type) + varint(section.flags) + varint(UInt64(section.stored.count))
            bytes += littleEndian(UInt64(CRC32.checksum(section.stored))).prefix(4)
            bytes += section.stored
        }
        return bytes
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        return bytes + [UInt8(value)]
    }

    static func littleEndian(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    static func bigEndian(_ value: UInt64, bytes: Int) -> [UInt8] { (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    // MARK: - Data files (Spec/data-blobs.md)

    static let blobMagic: [UInt8] = [0x89, 0x45, 0x4E, 0x42, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A deflated container of just under 1 MiB that claims 1000 times its stored length (the
    /// largest claim the ratio limit lets through, 975 MB) and inflates to more than that.
    static func blobRatioBomb() -> [UInt8] {
        let stored = RepeatingDeflate.stream(prefix: Array("A".utf8), distance: 1, matches: 3_900_000, lengthCodeBits: 1)
        return blobMagic + [1, 1] + littleEndian(UInt64(stored.count) * 1_000) + [UInt8](repeating: 0xAB, count: 32) + stored
    }

    /// A file of `size` bytes that holds `head` and then a hole: a few blocks on disk.
    static func sparseFile(_ head: [UInt8], size: Int64, at url: URL) throws {
        try writeFile(head, atPath: url.path)
        guard truncate(url.path, off_t(size)) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
    }

    // MARK: - Store registrations (binary property lists)

    /// A binary property list `{storeIdentifier: STORE-01, leechDate: …, bomb: <object 6>}`
    /// followed by the objects `bomb` (6, 7, …), encoded with `referenceSize`-byte references.
    static func binaryRegistration(bomb: [[UInt8]], referenceSize: Int) -> [UInt8] {
        func reference(_ index: Int) -> [UInt8] { bigEndian(UInt64(index), bytes: referenceSize) }
        var objects: [[UInt8]] = [
            [0xD3] + reference(1) + reference(2) + reference(3) + reference(4) + reference(5) + reference(6),
            [0x5F, 0x10, 15] + Array("storeIdentifier".utf8), [0x59] + Array("leechDate".utf8), [0x54] + Array("bomb".utf8),
            [0x58] + Array("STORE-01".utf8), [0x33] + bigEndian((731_000_000.0 as Double).bitPattern, bytes: 8),
        ]
        objects += bomb
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let offsetTable = bytes.count
        for offset in offsets { bytes += bigEndian(UInt64(offset), bytes: 4) }
        bytes += [0, 0, 0, 0, 0, 0, 4, UInt8(referenceSize)]
        bytes += bigEndian(UInt64(objects.count), bytes: 8) + bigEndian(0, bytes: 8) + bigEndian(UInt64(offsetTable), bytes: 8)
        return bytes
    }

    static func write(_ bytes: [UInt8], to ensemble: URL, _ name: String, in folder: CorpusEntry.Folder = .events) throws {
        try writeFile(bytes, atPath: ensemble.appendingPathComponent(folder.rawValue).appendingPathComponent(name).path)
    }

    /// A new file with these bytes, without the sync Foundation's writer makes (20,000 of them
    /// would take a minute).
    static func writeFile(_ bytes: [UInt8], atPath path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        defer { close(descriptor) }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
            written += count
        }
    }
}

/// A raw DEFLATE stream (RFC 1951) written by hand, so that a stream that inflates to hundreds of
/// megabytes costs its generator nothing: `prefix` in a stored block, then one dynamic Huffman
/// block of `matches` copies of 258 bytes from `distance` bytes back, and its end. Each copy
/// takes `lengthCodeBits` + 1 bits, so the stream inflates about 1032 (1 bit) or 688 (2 bits)
/// times its size.
enum RepeatingDeflate {
    static func stream(prefix: [UInt8], distance: Int, matches: Int, lengthCodeBits: Int) -> [UInt8] {
        precondition(!prefix.isEmpty && prefix.count <= 65_535 && distance <= prefix.count && (1...2).contains(lengthCodeBits))
        var writer = BitWriter()
        // Stored block, not final.
        writer.write(0, bits: 3)
        writer.alignToByte()
        writer.bytes += [UInt8(prefix.count & 0xFF), UInt8(prefix.count >> 8), UInt8(~prefix.count & 0xFF), UInt8((~prefix.count >> 8) & 0xFF)]
        writer.bytes += prefix
        // Dynamic block, final. Literal/length code: 285 (length 258) and 256 (end of block),
        // with two unused length codes when each takes two bits, so that the code is complete.
        var literalLengths = [Int](repeating: 0, count: 286)
        let used = lengthCodeBits == 1 ? [256, 285] : [256, 283, 284, 285]
        for symbol in used { literalLengths[symbol] = lengthCodeBits }
        // Distance code: the one for `distance`, and a second unused one of the same length.
        let (distanceCode, extraBits, base) = distanceSymbol(distance)
        var distanceLengths = [Int](repeating: 0, count: max(distanceCode, 1) + 1)
        distanceLengths[distanceCode] = 1
        distanceLengths[distanceCode == 0 ? 1 : 0] = 1
        // Code length code, complete: 0, 1 and 18 in two bits, 2 and 17 in three.
        var codeLengthLengths = [Int](repeating: 0, count: 19)
        for (symbol, length) in [(0, 2), (1, 2), (18, 2), (2, 3), (17, 3)] { codeLengthLengths[symbol] = length }
        let codeLengthCodes = canonicalCodes(codeLengthLengths)
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        writer.write(1, bits: 1)
        writer.write(2, bits: 2)
        writer.write(UInt32(literalLengths.count - 257), bits: 5)
        writer.write(UInt32(distanceLengths.count - 1), bits: 5)
        writer.write(18 - 4, bits: 4)
        for symbol in order.prefix(18) { writer.write(UInt32(codeLengthLengths[symbol]), bits: 3) }
        let lengths = literalLengths + distanceLengths
        var index = 0
        while index < lengths.count {
            guard lengths[index] == 0 else {
                writer.code(codeLengthCodes[lengths[index]], length: codeLengthLengths[lengths[index]])
                index += 1
                continue
            }
            var run = 0
            while index + run < lengths.count && lengths[index + run] == 0 { run += 1 }
            index += run
            while run >= 11 {
                let count = min(run, 138)
                writer.code(codeLengthCodes[18], length: codeLengthLengths[18])
                writer.write(UInt32(count - 11), bits: 7)
                run -= count
            }
            if run >= 3 {
                writer.code(codeLengthCodes[17], length: codeLengthLengths[17])
                writer.write(UInt32(run - 3), bits: 3)
                run = 0
            }
            for _ in 0..<run { writer.code(codeLengthCodes[0], length: codeLengthLengths[0]) }
        }
        let literalCodes = canonicalCodes(literalLengths)
        let distanceCodes = canonicalCodes(distanceLengths)
        var match = BitWriter()
        match.code(literalCodes[285], length: lengthCodeBits)
        match.code(distanceCodes[distanceCode], length: 1)
        match.write(UInt32(distance - base), bits: extraBits)
        writer.repeatBits(of: match, times: matches)
        writer.code(literalCodes[256], length: lengthCodeBits)
        return writer.bytes
    }

    /// RFC 1951 3.2.5: the distance code, its extra bits and its base distance.
    static func distanceSymbol(_ distance: Int) -> (code: Int, extraBits: Int, base: Int) {
        for code in 0..<30 {
            let extra = code < 4 ? 0 : code / 2 - 1
            let base = code < 4 ? code + 1 : ((2 + (code & 1)) << extra) + 1
            if distance >= base && distance < base + (1 << extra) { return (code, extra, base) }
        }
        return (0, 0, 1)
    }

    /// RFC 1951 3.2.2: codes from code lengths.
    static func canonicalCodes(_ lengths: [Int]) -> [UInt32] {
        let maximum = lengths.max() ?? 0
        var count = [Int](repeating: 0, count: maximum + 1)
        for length in lengths where length > 0 { count[length] += 1 }
        var next = [UInt32](repeating: 0, count: maximum + 2)
        var code: UInt32 = 0
        for bits in stride(from: 1, through: maximum, by: 1) {
            code = (code + UInt32(count[bits - 1])) << 1
            next[bits] = code
        }
        return lengths.map { length in
            guard length > 0 else { return 0 }
            defer { next[length] += 1 }
            return next[length]
        }
    }
}

/// Bits in DEFLATE order: least significant bit of each byte first.
struct BitWriter {
    var bytes: [UInt8] = []
    var used = 0
    /// Bits not yet in `bytes` form a trailing partial byte whose `used` low bits are set.
    var bitCount: Int { bytes.count * 8 - (used == 0 ? 0 : 8 - used) }

    mutating func bit(_ value: UInt32) {
        if used == 0 { bytes.append(0) }
        if value & 1 != 0 { bytes[bytes.count - 1] |= UInt8(1 << used) }
        used = (used + 1) % 8
    }

    /// A number, least significant bit first.
    mutating func write(_ value: UInt32, bits: Int) {
        for index in 0..<bits { bit(value >> UInt32(index)) }
    }

    /// A Huffman code, most significant bit first.
    mutating func code(_ value: UInt32, length: Int) {
        for index in stride(from: length - 1, through: 0, by: -1) { bit(value >> UInt32(index)) }
    }

    mutating func alignToByte() { used = 0 }

    /// The bits of `pattern`, `times` times; whole bytes at a time once aligned.
    mutating func repeatBits(of pattern: BitWriter, times: Int) {
        let bits = pattern.bitCount
        var left = times
        func once(_ writer: inout BitWriter) {
            for index in 0..<bits { writer.bit(UInt32(pattern.bytes[index / 8] >> UInt8(index % 8))) }
        }
        while left > 0 && used != 0 {
            once(&self)
            left -= 1
        }
        // The least number of copies that fills whole bytes.
        var perBlock = 1
        while perBlock * bits % 8 != 0 { perBlock += 1 }
        var block = BitWriter()
        for _ in 0..<perBlock { once(&block) }
        let blocks = left / perBlock
        bytes.reserveCapacity(bytes.count + blocks * block.bytes.count + 8)
        for _ in 0..<blocks { bytes += block.bytes }
        for _ in 0..<(left - blocks * perBlock) { once(&self) }
    }
}

/// CRC-32 of ISO-HDLC (zlib's), for the binary sections.
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
}
