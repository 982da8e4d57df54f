import EnsembleModel
import EnsemblesToolkit
import FileWrappers
import Foundation
import JSONDocument
import SQLiteConnection
import SchemaValidation
import Testing

@testable import TICDS

/// A TICoreDataSync folder built by hand, file by file, with chosen modification times; the
/// expected reports below are derived from this construction and Spec/ticds.md, not from the
/// toolkit's output.
struct HandMadeFolder {
    let root: URL
    var app: URL { root.appendingPathComponent("com.example.app") }
    var document: URL { app.appendingPathComponent("Documents/DOC1") }

    static func archive(_ objects: String, root: Int = 1) -> [UInt8] {
        Array(
            """
            <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>\
            <key>$archiver</key><string>NSKeyedArchiver</string><key>$version</key><integer>100000</integer>\
            <key>$top</key><dict><key>root</key><dict><key>CF$UID</key><integer>\(root)</integer></dict></dict>\
            <key>$objects</key><array><string>$null</string>\(objects)</array></dict></plist>
            """.utf8)
    }

    /// `{"title": "Hello"}` as NSKeyedArchiver writes a dictionary.
    static let titleArchive = archive(
        """
        <dict><key>NS.keys</key><array><dict><key>CF$UID</key><integer>2</integer></dict></array>\
        <key>NS.objects</key><array><dict><key>CF$UID</key><integer>3</integer></dict></array>\
        <key>$class</key><dict><key>CF$UID</key><integer>4</integer></dict></dict>\
        <string>title</string><string>Hello</string>\
        <dict><key>$classname</key><string>NSDictionary</string><key>$classes</key><array><string>NSDictionary</string><string>NSObject</string></array></dict>
        """)
    static let tagArchive = archive("<string>TAG-1</string>")

    static func plist(_ body: String) -> Data {
        Data(#"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>\#(body)</dict></plist>"#.utf8)
    }

    /// A database built with SQL at a scratch path, returned as bytes.
    static func database(_ sql: [String], binds: [[SQLValue]] = []) throws -> [UInt8] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ticds-test-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let connection = try Connection(path: path)
        for (index, statement) in sql.enumerated() {
            let prepared = try connection.prepare(statement)
            for (position, value) in (index < binds.count ? binds[index] : []).enumerated() { try prepared.bind(Int32(position + 1), value) }
            try prepared.run()
        }
        connection.close()
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static let changeTable =
        "CREATE TABLE ZTICDSSYNCCHANGE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZOBJECTENTITYNAME VARCHAR, ZOBJECTSYNCID VARCHAR, ZRELEVANTKEY VARCHAR, ZRELATEDOBJECTENTITYNAME VARCHAR, ZLOCALTIMESTAMP TIMESTAMP, ZCHANGEDATTRIBUTES BLOB, ZCHANGEDRELATIONSHIPS BLOB)"
    static let insertChange = "INSERT INTO ZTICDSSYNCCHANGE VALUES (?1, 1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"

    /// Two changes stored out of the order they are applied in: a to-one change (3) at 10.0,
    /// then an insert (1) at 20.0.
    static func changeSet() throws -> [UInt8] {
        try database(
            [changeTable, insertChange, insertChange],
            binds: [
                [],
                [.integer(1), .integer(3), .text("Note"), .text("N-1"), .text("tag"), .text("Tag"), .real(10), .null, .blob(tagArchive)],
                [.integer(2), .integer(1), .text("Note"), .text("N-1"), .null, .null, .real(20), .blob(titleArchive), .null],
            ])
    }

    static func appliedSets(_ identifiers: [String]) throws -> [UInt8] {
        try database(
            [
                "CREATE TABLE ZTICDSSYNCCHANGESET (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZSYNCCHANGESETIDENTIFIER VARCHAR, ZCLIENTIDENTIFIER VARCHAR, ZCREATIONDATE TIMESTAMP)"
            ]
                + identifiers.map { "INSERT INTO ZTICDSSYNCCHANGESET VALUES (NULL, 1, 1, '\($0)', 'c2', 0)" })
    }

    static func store() throws -> [UInt8] {
        let metadata = plist(
            "<key>NSStoreType</key><string>SQLite</string><key>NSStoreUUID</key><string>UUID-1</string><key>NSStoreModelVersionHashes</key><dict><key>Note</key><data>AAAA</data></dict>"
        )
        return try database(
            [
                "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)", "INSERT INTO Z_METADATA VALUES (1, 'UUID-1', ?1)",
                "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
                "INSERT INTO Z_PRIMARYKEY VALUES (1, 'Note', 0, 1)",
                "CREATE TABLE ZNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZTITLE VARCHAR)",
                "INSERT INTO ZNOTE VALUES (1, 1, 1, 'Hello')",
            ], binds: [[], [.blob(Array(metadata))]])
    }

    /// Writes `bytes` at `relative` (below the application folder) with modification time `time`
    /// (seconds since 1970), through `encrypt` when given.
    func write(_ relative: String, _ bytes: [UInt8], time: Double = 1_000_000, encrypt: (([UInt8]) -> [UInt8])? = nil) throws {
        let url = app.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(encrypt?(bytes) ?? bytes).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: time)], ofItemAtPath: url.path)
    }

    func folder(_ relative: String) throws {
        try FileManager.default.createDirectory(at: app.appendingPathComponent(relative), withIntermediateDirectories: true)
    }

    /// Set identifiers of the folder and their (client, modification time).
    static let setA = "0000000002.000000-B"
    static let setB = "0000000001.000000-A"
    static let setC = "0000000003.000000-C"
    static let binary = "0000000004.000000-D"

    /// Clients c1 (deviceInfo), c2 (a folder without deviceInfo), c3 (sets only); document DOC1
    /// with one integrity key, sets of c1 and c3 and a binary-store set of c1, c2's WholeStore and
    /// AppliedSyncChangeSets (which lists setB), a temporary upload, a deleted client c9;
    /// DOC0 deleted at the application level. `encrypt` encrypts what the framework encrypts.
    static func make(encrypt: (([UInt8]) -> [UInt8])? = nil, salt: [UInt8]? = nil, test: [UInt8]? = nil) throws -> HandMadeFolder {
        let made = HandMadeFolder(root: FileManager.default.temporaryDirectory.appendingPathComponent("ticds-\(UUID().uuidString)"))
        try made.write("ReadMe.txt", Array("Hello!".utf8))
        if let salt { try made.write("Encryption/salt.ticdsync", salt) }
        if let test { try made.write("Encryption/test.ticdsync", test) }
        try made.write(
            "ClientDevices/c1/deviceInfo.plist", Array(plist("<key>kTICDSClientDeviceDescription</key><string>Mac one</string>")), encrypt: encrypt)
        try made.folder("ClientDevices/c2")
        try made.write("Information/DeletedDocuments/DOC0.plist", Array(plist("")), encrypt: encrypt)
        try made.folder("Information/DeletedClients")
        let doc = "Documents/DOC1/"
        try made.write(doc + "documentInfo.plist", Array(plist("<key>kTICDSDocumentDescription</key><string>Notes</string>")), encrypt: encrypt)
        try made.write(doc + "IntegrityKey/KEY-12345", [])
        let set = try changeSet()
        // Times: the binary set (the largest identifier) at 200; B (c3, listed last, the smallest
        // identifier), A and C at 1,000. By date, then identifier: binary, B, A, C; by identifier
        // alone B, A, C, binary; by date alone, in listing order, binary, A, C, B.
        try made.write(doc + "SyncChanges/c1/\(setA).syncchg", set, time: 1_000, encrypt: encrypt)
        try made.write(doc + "SyncChanges/c3/\(setB).syncchg", set, time: 1_000, encrypt: encrypt)
        try made.write(doc + "SyncChanges/c1/\(setC).syncchg", set, time: 1_000, encrypt: encrypt)
        try made.write(doc + "SyncChanges/c1/\(binary).syncchg", Array("bplist00 not a store the toolkit reads".utf8), time: 200, encrypt: encrypt)
        try made.write(doc + "WholeStore/c2/WholeStore.ticdsync", try store(), time: 800, encrypt: encrypt)
        try made.write(doc + "WholeStore/c2/AppliedSyncChangeSets.ticdsync", try appliedSets([setB]), time: 800)
        try made.write(doc + "RecentSyncs/c2.recentsync", Array(plist("<key>kTICDSLastSyncDate</key><date>2020-01-01T00:00:00Z</date>")), time: 900)
        try made.write(doc + "TemporaryFiles/WholeStore/c1/WholeStore.ticdsync", [1, 2, 3])
        try made.write(doc + "DeletedClients/c9.plist", Array(plist("")), encrypt: encrypt)
        return made
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
}

@Suite("TICDS folder")
struct TICDSFolderTests {
    static func member(_ value: JSONValue?, _ path: String...) -> JSONValue? { value?[JSONPointer(path)] }

    @Test("an application folder and its document folder are recognised; a cloud folder is not")
    func detection() throws {
        let made = try HandMadeFolder.make()
        defer { made.remove() }
        #expect(TICDSFolder.looksLikeTICDS(made.app.path))
        #expect(TICDSFolder.looksLikeTICDS(made.document.path))
        #expect(!TICDSFolder.looksLikeTICDS(made.root.path))
        #expect(!TICDSFolder.looksLikeTICDS(made.app.appendingPathComponent("ClientDevices").path))
    }

    @Test("an integrity key has at least 5 UTF-16 code units, as NSString counts its length (Spec/ticds.md 3)")
    func integrityKeyLength() {
        // 5 code units in 4 characters (an accent written as a combining mark; a character outside
        // the Basic Multilingual Plane) are keys; 4 code units are not; hidden names never are.
        let names = ["KEY-1", "abc\u{1F44D}", "ab\u{1F44D}", "e\u{301}xyz", "exyz", ".hidden-key"]
        #expect(TICDSFolder.integrityKeys(names) == ["KEY-1", "abc\u{1F44D}", "e\u{301}xyz"])
    }

    @Test("a hidden name starts with the byte \".\": \".\" followed by a combining mark is hidden too (Spec/ticds.md 3)")
    func hiddenByByte() throws {
        let made = try HandMadeFolder.make()
        defer { made.remove() }
        // To Swift, ".\u{301}c4" does not start with ".": its first character is "." and the accent.
        try made.folder("Documents/DOC1/SyncChanges/.\u{301}c4")
        try made.folder("Documents/DOC1/SyncChanges/.c5")
        let folder = try TICDSFolder.read(made.app.path, password: nil)
        #expect(folder.documents.first?.syncClients == ["c1", "c3"])
    }

    @Test("--dates keeps a date for each of two paths that differ only in Unicode normalisation (Spec/ticds.md 6.5)")
    func twinDatePaths() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dates-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"D/caf\#u{E9}": 1, "D/cafe\#u{301}": 2}"#.utf8).write(to: file)
        let dates = try TICDSFolder.readDates(file.path)
        #expect(dates.count == 2)
        #expect(dates["D/caf\u{E9}"] == 1 && dates["D/cafe\u{301}"] == 2)
    }

    @Test("sets come in the order of the remote file's modification time, then the set identifier")
    func setOrder() throws {
        let made = try HandMadeFolder.make()
        defer { made.remove() }
        let report = try Ensemble(at: made.app).inspectTICDS()
        let sets = Self.member(report, "documents", "0", "sets")?.arrayValue ?? []
        #expect(
            sets.map { Self.member($0, "identifier")?.stringValue } == [HandMadeFolder.binary, HandMadeFolder.setB, HandMadeFolder.setA, HandMadeFolder.setC])
        #expect(sets.map { Self.member($0, "client")?.stringValue } == ["c1", "c3", "c1", "c1"])
        #expect(try BundledSchema.inspect.validator().validate(report).isEmpty)
    }

    @Test("a set in SQLite form is decoded row by row, in (change type, local time stamp) order, with its keyed-archive payloads")
    func decodedChanges() throws {
        let made = try HandMadeFolder.make()
        defer { made.remove() }
        let report = try Ensemble(at: made.app).inspectTICDS()
        let set = Self.member(report, "documents", "0", "sets", "2")
        #expect(Self.member(set, "form") == .string("sqlite"))
        let changes = Self.member(set, "changes")?.arrayValue ?? []
        #expect(changes.map { Self.member($0, "changeType") } == [JSONValue(Int64(1)), JSONValue(Int64(3))])
        #expect(Self.member(changes.first, "changedAttributes", "title") == .string("Hello"))
        #expect(Self.member(changes.last, "changedRelationships") == .string("TAG-1"))
        #expect(Self.member(changes.last, "relatedEntity") == .string("Tag"))
    }

    @Test("a set that is not SQLite is classified as Apple's binary store, never decoded")
    func binaryStore() throws {
        let made = try HandMadeFolder.make()
        defer { made.remove() }
        let report = try Ensemble(at: made.app).inspectTICDS()
        let set = Self.member(report, "documents", "0", "sets", "0")
        #expect(Self.member(set, "form") == .string("binary-store"))
        #expect(Self.member(set, "error") == .string("file.kind-binary-store"))
        #expect(Self.member(set, "changes") == .null)
        #expect(ChangeSetForm.detect(Array("SQLite format 3".utf8) + [0, 1]) == .sqlite)
        #expect(ChangeSetForm.detect(Array("SQLite format 3".utf8)) == .binaryStore)
        #expect(ChangeSetForm.detect([]) == .binaryStore)
    }

    @Test("the WholeStore is shown with the store inspection, AppliedSyncChangeSets with its rows")
    func wholeStore() throws {
        let made = try HandMadeFolder.make()
        defer { made.remove() }
        let report = try Ensemble(at: made.app).inspectTICDS()
        let whole = Self.member(report, "documents", "0", "wholeStores", "0")
        #expect(Self.member(whole, "store", "uuid") == .string("UUID-1"))
        #expect(Self.member(whole, "layers") == .array([]))
        #expect(Self.member(whole, "appliedSets") == .array([.string(HandMadeFolder.setB)]))
    }

    static func codes(_ diagnostics: [Diagnostic]) -> [String: [String]] {
        var found: [String: [String]] = [:]
        for diagnostic in diagnostics { found[diagnostic.code.rawValue, default: []] += diagnostic.files }
        return found
    }

    @Test("verify finds each condition the folder was built with, and nothing else")
    func verify() throws {
        let made = try HandMadeFolder.make()
        defer { made.remove() }
        let found = try Ensemble(at: made.app).verifyTICDS(now: 10_000)
        let doc = "Documents/DOC1/"
        let sets = [HandMadeFolder.setA, HandMadeFolder.setC, HandMadeFolder.binary].map { doc + "SyncChanges/c1/\($0).syncchg" }
        #expect(
            Self.codes(found) == [
                "file.kind-binary-store": [sets[2]],
                "ticds.client-without-device-info": ["ClientDevices/c2"],
                "ticds.unknown-client": [doc + "SyncChanges/c3/\(HandMadeFolder.setB).syncchg"],
                // c2 listed only setB: the binary set, A and C, in that order.
                "ticds.unapplied-sets": sets,
                "ticds.temporary-files": [doc + "TemporaryFiles/WholeStore/c1/WholeStore.ticdsync"],
                "ticds.deleted-document": ["Information/DeletedDocuments/DOC0.plist"],
                "ticds.deleted-client": [doc + "DeletedClients/c9.plist"],
                // Cut-off: the earlier of the WholeStore (800) and the recent sync (900): the binary set (200).
                "ticds.vacuum-would-remove": [sets[2]],
            ])
        let unapplied = found.first { $0.code == .ticdsUnappliedSets }
        #expect(unapplied?.details["sets"] == .array([HandMadeFolder.binary, HandMadeFolder.setA, HandMadeFolder.setC].map(JSONValue.string)))
        #expect(unapplied?.details["oldestAge"] == JSONValue(9_800.0))
    }

    @Test("set and client identifiers are told apart by their bytes: a twin in another Unicode normalisation is another set, another client")
    func twinIdentifiers() throws {
        let made = try HandMadeFolder.make()
        defer { made.remove() }
        let doc = "Documents/DOC1/"
        // c2 lists setB and a set spelt with U+00C9; c3 made both that one and the one spelt with
        // E + U+0301, which c2 has not applied. A client folder spelt with U+00E9 in SyncChanges
        // has its folder in ClientDevices only in the other spelling: it is unknown. A set whose
        // identifier ends in U+0600 (which joins the "." after it into one character) is a set.
        let composed = "0000000005.000000-\u{C9}", decomposed = "0000000005.000000-E\u{301}", prepended = "0000000006.000000-\u{600}"
        try made.write(doc + "WholeStore/c2/AppliedSyncChangeSets.ticdsync", try HandMadeFolder.appliedSets([HandMadeFolder.setB, composed]), time: 800)
        for identifier in [composed, decomposed, prepended] {
            try made.write(doc + "SyncChanges/c3/\(identifier).syncchg", try HandMadeFolder.changeSet(), time: 1_000)
        }
        try made.write(doc + "SyncChanges/c\u{E9}/\(HandMadeFolder.setC)x.syncchg", try HandMadeFolder.changeSet(), time: 1_000)
        try made.write("ClientDevices/ce\u{301}/deviceInfo.plist", Array(HandMadeFolder.plist("")))
        // A document listed as deleted spelt with U+00C9, whose folder is there only spelt with
        // E + U+0301: no folder of it is present.
        try made.write("Information/DeletedDocuments/D\u{C9}.plist", Array(HandMadeFolder.plist("")))
        try made.folder("Documents/DE\u{301}/SyncChanges")
        let found = try Ensemble(at: made.app).verifyTICDS(now: 10_000)
        let unapplied = found.first { $0.code == .ticdsUnappliedSets }?.details["sets"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(unapplied.contains { exactlyEqual($0, decomposed) } && unapplied.contains { exactlyEqual($0, prepended) })
        #expect(!unapplied.contains { exactlyEqual($0, composed) })
        let unknown = found.filter { $0.code == .ticdsUnknownClient }.compactMap { $0.details["client"]?.stringValue }
        #expect(unknown.count == 2 && unknown.contains { exactlyEqual($0, "c\u{E9}") } && unknown.contains("c3"))
        // A finding's files are each path once by its bytes: c3's four sets, twins included.
        #expect(found.first { $0.code == .ticdsUnknownClient && $0.details["client"] == .string("c3") }?.files.count == 4)
        let deleted = found.first { $0.code == .ticdsDeletedDocument && $0.files.contains { exactlyEqual($0, "Information/DeletedDocuments/D\u{C9}.plist") } }
        #expect(deleted?.details["folderPresent"] == .bool(false))
        // c2's view in inspect (a client with sets of its own has one): what it applies next.
        try made.write(doc + "SyncChanges/c2/0000000007.000000-F.syncchg", try HandMadeFolder.changeSet(), time: 1_000)
        let report = try Ensemble(at: made.app).inspectTICDS()
        let documents = Self.member(report, "documents")?.arrayValue ?? []
        let document = documents.first { Self.member($0, "identifier")?.stringValue == "DOC1" }
        let next = Self.member(document, "clientViews", "c2", "next")?.arrayValue?.compactMap { Self.member($0, "identifier")?.stringValue } ?? []
        #expect(next.contains { exactlyEqual($0, decomposed) } && !next.contains { exactlyEqual($0, composed) })
    }

    @Test("two binary-store sets whose names differ only in normalisation: each finding names its own set and size")
    func twinBinaryStores() throws {
        let made = try HandMadeFolder.make()
        defer { made.remove() }
        let doc = "Documents/DOC1/SyncChanges/c1/"
        let composed = "0000000008.000000-\u{C9}", decomposed = "0000000008.000000-E\u{301}"
        // Sizes 10 and 20, so that a finding that took its twin's set shows the twin's size too.
        try made.write(doc + "\(composed).syncchg", Array("bplist00..".utf8), time: 1_000)
        try made.write(doc + "\(decomposed).syncchg", Array("bplist00..........".utf8) + [0, 0], time: 1_000)
        let found = try Ensemble(at: made.app).verifyTICDS(now: 10_000).filter { $0.code == .fileKindBinaryStore }
        for (identifier, size) in [(composed, 10), (decomposed, 20)] {
            let finding = found.first { $0.files.count == 1 && exactlyEqual($0.files[0], doc + "\(identifier).syncchg") }
            #expect(finding?.details["set"]?.stringValue.map { exactlyEqual($0, identifier) } == true, "\(Array(identifier.utf8))")
            #expect(finding?.details["size"] == JSONValue(Int64(size)))
        }
    }

    @Test("a document folder given alone is read alone, not with its twin in another normalisation")
    func twinDocuments() throws {
        let made = try HandMadeFolder.make()
        defer { made.remove() }
        for name in ["D\u{C9}", "DE\u{301}"] {
            try made.folder("Documents/\(name)/SyncChanges")
            try made.folder("Documents/\(name)/IntegrityKey")
        }
        let report = try Ensemble(at: made.app.appendingPathComponent("Documents/D\u{C9}")).inspectTICDS()
        let identifiers = Self.member(report, "documents")?.arrayValue?.compactMap { Self.member($0, "identifier")?.stringValue } ?? []
        #expect(identifiers.count == 1 && identifiers.allSatisfy { exactlyEqual($0, "D\u{C9}") })
    }

    @Test("a change set's columns are matched as SQLite matches them, ASCII letters without case: one spelt with U+212A for K is another column")
    func columnNamesByBytes() throws {
        let table = HandMadeFolder.changeTable.replacingOccurrences(of: "ZRELEVANTKEY", with: "ZRELEVANT\u{212A}EY")
            .replacingOccurrences(of: "ZCHANGETYPE", with: "zChangeType")
        let bytes = try HandMadeFolder.database(
            [table, HandMadeFolder.insertChange],
            binds: [
                [], [.integer(1), .integer(3), .text("Note"), .text("N-1"), .text("tag"), .text("Tag"), .real(10), .null, .blob(HandMadeFolder.tagArchive)],
            ])
        let changes = try SyncChangeStore.changes(bytes)
        #expect(changes.count == 1 && changes.first?.changeType == 3 && changes.first?.relevantKey == nil && changes.first?.syncID == "N-1")
    }

    @Test("an encrypted folder: the right password reads it, a wrong one is one finding, none is one finding")
    func encrypted() throws {
        let salt = Array(UInt8(0)..<16)
        let key = FZACryptor.syncKey(password: "secret", salt: salt)
        var counter: UInt8 = 0
        let encrypt: ([UInt8]) -> [UInt8] = { plain in
            counter &+= 1
            return FZACryptor.encrypt(
                plain, key: key, iv: Array(repeating: counter, count: 16), fileKey: Array(repeating: counter &+ 1, count: 32),
                fileIV: Array(repeating: 7, count: 16))
        }
        let test = encrypt(HandMadeFolder.archive("<string>com.example.appXYZ</string>"))
        let made = try HandMadeFolder.make(encrypt: encrypt, salt: salt, test: test)
        defer { made.remove() }
        var options = Ensemble.Options()
        options.password = PasswordSource(password: "secret")
        let report = try Ensemble(at: made.app, options: options).inspectTICDS()
        #expect(Self.member(report, "encryption", "password") == .string("right"))
        #expect(Self.member(report, "encryption", "testString") == .string("com.example.appXYZ"))
        #expect(Self.member(report, "documents", "0", "wholeStores", "0", "layers") == .array([.string("encrypted")]))
        #expect(Self.member(report, "documents", "0", "sets", "1", "changes", "0", "syncID") == .string("N-1"))
        #expect(Self.member(report, "clients", "0", "description") == .string("Mac one"))
        #expect(try BundledSchema.inspect.validator().validate(report).isEmpty)

        options.password = PasswordSource(password: "wrong")
        let wrong = try Ensemble(at: made.app, options: options).verifyTICDS(now: 10_000)
        #expect(Self.codes(wrong)["ticds.wrong-password"] == ["Encryption/test.ticdsync"])
        #expect(!wrong.contains { $0.code == .ticdsBadHMAC })

        let none = try Ensemble(at: made.app).verifyTICDS(now: 10_000)
        #expect(Self.codes(none)["ticds.password-required"] == ["Encryption/salt.ticdsync"])
        // deviceInfo, documentInfo, four sets, the WholeStore: the copies of deleted documents and
        // clients are listed by name only, never read.
        #expect(none.first { $0.code == .ticdsPasswordRequired }?.details["undecrypted"] == JSONValue(Int64(7)))
    }

    @Test("with the right password, a tampered set is ticds.bad-hmac and a cut one ticds.truncated")
    func damagedEncryptedFiles() throws {
        let salt = Array(UInt8(0)..<16)
        let key = FZACryptor.syncKey(password: "secret", salt: salt)
        let encrypt: ([UInt8]) -> [UInt8] = {
            FZACryptor.encrypt(
                $0, key: key, iv: Array(repeating: 1, count: 16), fileKey: Array(repeating: 2, count: 32), fileIV: Array(repeating: 3, count: 16))
        }
        let made = try HandMadeFolder.make(encrypt: encrypt, salt: salt, test: encrypt(HandMadeFolder.archive("<string>x</string>")))
        defer { made.remove() }
        let doc = "Documents/DOC1/SyncChanges/"
        var tampered = Array(try Data(contentsOf: made.app.appendingPathComponent(doc + "c1/\(HandMadeFolder.setA).syncchg")))
        tampered[100] ^= 0xFF
        try made.write(doc + "c1/\(HandMadeFolder.setA).syncchg", tampered, time: 1_000)
        let cut = Array(try Data(contentsOf: made.app.appendingPathComponent(doc + "c1/\(HandMadeFolder.setC).syncchg")).prefix(200))
        try made.write(doc + "c1/\(HandMadeFolder.setC).syncchg", cut, time: 1_000)
        var options = Ensemble.Options()
        options.password = PasswordSource(password: "secret")
        let found = Self.codes(try Ensemble(at: made.app, options: options).verifyTICDS(now: 10_000))
        #expect(found["ticds.bad-hmac"] == [doc + "c1/\(HandMadeFolder.setA).syncchg"])
        #expect(found["ticds.truncated"] == [doc + "c1/\(HandMadeFolder.setC).syncchg"])
        #expect(found["ticds.wrong-password"] == nil)
    }

    @Test("a cut test.ticdsync is ticds.truncated and every other file still decrypts; an oversized plist is ticds.too-large")
    func cutTestFileAndOversizedPlist() throws {
        let salt = Array(UInt8(0)..<16)
        let key = FZACryptor.syncKey(password: "secret", salt: salt)
        let encrypt: ([UInt8]) -> [UInt8] = {
            FZACryptor.encrypt(
                $0, key: key, iv: Array(repeating: 1, count: 16), fileKey: Array(repeating: 2, count: 32), fileIV: Array(repeating: 3, count: 16))
        }
        let made = try HandMadeFolder.make(encrypt: encrypt, salt: salt, test: Array(encrypt(HandMadeFolder.archive("<string>x</string>")).prefix(50)))
        defer { made.remove() }
        try made.write("Documents/DOC1/RecentSyncs/c2.recentsync", Array(repeating: 0x20, count: 16 * 1024 * 1024 + 1), time: 900)
        var options = Ensemble.Options()
        options.password = PasswordSource(password: "secret")
        let report = try Ensemble(at: made.app, options: options).inspectTICDS()
        #expect(Self.member(report, "encryption", "password") == .string("unchecked"))
        let errors = (Self.member(report, "errors")?.arrayValue ?? []).map { [Self.member($0, "code")?.stringValue, Self.member($0, "file")?.stringValue] }
        #expect(
            errors.sorted { ($0[1] ?? "") < ($1[1] ?? "") } == [
                ["ticds.too-large", "Documents/DOC1/RecentSyncs/c2.recentsync"],
                ["file.kind-binary-store", "Documents/DOC1/SyncChanges/c1/\(HandMadeFolder.binary).syncchg"],
                ["ticds.truncated", "Encryption/test.ticdsync"],
            ])
        #expect(Self.member(report, "documents", "0", "sets", "1", "changes", "0", "syncID") == .string("N-1"))
    }

    @Test("reading writes nothing into the folder and follows no link")
    func readOnly() throws {
        let made = try HandMadeFolder.make()
        defer { made.remove() }
        // A link in place of a set is never followed.
        let outside = made.root.appendingPathComponent("outside.syncchg")
        try Data(try HandMadeFolder.changeSet()).write(to: outside)
        try FileManager.default.createSymbolicLink(
            atPath: made.document.appendingPathComponent("SyncChanges/c1/0000000009.000000-L.syncchg").path, withDestinationPath: outside.path)
        func listing() -> [String] {
            (FileManager.default.enumerator(atPath: made.root.path)?.allObjects as? [String] ?? []).sorted()
        }
        let before = listing()
        let report = try Ensemble(at: made.app).inspectTICDS()
        _ = try Ensemble(at: made.app).verifyTICDS()
        #expect(listing() == before)
        #expect(Self.member(report, "documents", "0", "otherSyncFiles") == nil)
        let sets = Self.member(report, "documents", "0", "sets")?.arrayValue ?? []
        #expect(!sets.contains { Self.member($0, "identifier") == .string("0000000009.000000-L") && Self.member($0, "changes") != .null })
    }
}
