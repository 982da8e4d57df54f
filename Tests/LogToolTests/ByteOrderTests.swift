import Foundation
import Testing
import EnsemblesToolkit
import JSONDocument

/// Reports list files, stores and pointers in UTF-8 byte order (Spec/README.md 4, "string order"). Swift's
/// `==` calls "café" in NFC (bytes 63 61 66 C3 A9) and in NFD (63 61 66 65 CC 81) equal; an order
/// that asked it first took the next key instead and put the NFC name first.
@Suite("Byte order of names that differ only in normalisation")
struct ByteOrderTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    /// The example folder copied into a scratch folder: (scratch, ensemble folder).
    static func example() throws -> (scratch: URL, ensemble: URL) {
        let scratch = try scratchDirectory()
        try FileManager.default.copyItem(
            at: Run.packageRoot.appendingPathComponent("Fixtures/folders/example/cloud"), to: scratch.appendingPathComponent("cloud"))
        return (scratch, scratch.appendingPathComponent("cloud/MainStore"))
    }

    /// A v2 JSON event of `store` with the given type and global count (JSON text) and `extra`
    /// members at the top level.
    static func event(store: String, type: String = "200", globalCount: String = "50", extra: String = #""x":0"#) -> Data {
        let text = """
            {"changesByEntity":{},"globalCount":\(globalCount),"revisionsByStoreIdentifier":{"\(store)":0},"storeIdentifier":"\(store)",\
            "timestamp":"731336181.321","type":\(type),"uniqueIdentifier":"E-\(store)",\(extra)}
            """
        return Data(text.utf8)
    }

    static func bytes(_ values: [JSONValue]) -> [[UInt8]] { values.compactMap { $0.stringValue.map { Array($0.utf8) } } }

    @Test("IntegrityProblem.reportPrecedes orders files by bytes before details")
    func problems() {
        let nfcFirstDetail = IntegrityProblem(
            code: .init("merge.x"), number: nil, files: [Self.nfc], message: "", details: JSONObject([("n", JSONValue(Int64(1)))]))
        let nfdSecondDetail = IntegrityProblem(
            code: .init("merge.x"), number: nil, files: [Self.nfd], message: "", details: JSONObject([("n", JSONValue(Int64(2)))]))
        #expect(IntegrityProblem.reportPrecedes(nfdSecondDetail, nfcFirstDetail))
        #expect(!IntegrityProblem.reportPrecedes(nfcFirstDetail, nfdSecondDetail))
    }

    @Test("verify orders two debris entries by their names' bytes, not by their kinds")
    func verifyDebris() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        // The NFD name a symbolic link (kind symlink), the NFC one a conflicted copy: by kind the
        // NFC one would come first.
        let events = ensemble.appendingPathComponent("events")
        try FileManager.default.createSymbolicLink(atPath: events.appendingPathComponent("\(Self.nfd) (1)").path, withDestinationPath: "nowhere")
        try Data("x".utf8).write(to: events.appendingPathComponent("\(Self.nfc) (1)"))
        let run = try Run("verify", "--json", ensemble.path)
        let diagnostics = try JSONParser.parse(run.stdout)[JSONPointer(["ensembles", "0", "diagnostics"])]?.arrayValue ?? []
        let debris = diagnostics.filter { $0[JSONPointer(["files", "0"])]?.stringValue?.hasPrefix("events/caf") == true }
        let files = Self.bytes(debris.compactMap { $0[JSONPointer(["files", "0"])] })
        #expect(files == [Array("events/\(Self.nfd) (1)".utf8), Array("events/\(Self.nfc) (1)".utf8)])
        #expect(debris.map { $0[JSONPointer(["details", "kind"])] } == [.string("symlink"), .string("conflictedCopy")], "\(run.stdout)")
    }

    @Test("inspect orders unknown keys by their files' bytes before their pointers")
    func inspectUnknownKeys() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let events = ensemble.appendingPathComponent("events")
        try Self.event(store: Self.nfd, extra: #""zz":1"#).write(to: events.appendingPathComponent("50_\(Self.nfd)_0.cdeevent"))
        try Self.event(store: Self.nfc, extra: #""aa":1"#).write(to: events.appendingPathComponent("50_\(Self.nfc)_0.cdeevent"))
        let run = try Run("inspect", "--json", ensemble.path)
        let keys = try JSONParser.parse(run.stdout)[JSONPointer(["ensembles", "0", "unknownKeys"])]?.arrayValue ?? []
        #expect(keys.map { $0[JSONPointer(["pointer"])] } == [.string("/zz"), .string("/aa")], "\(run.stdout)")
    }

    @Test("convert --json orders its errors by their files' bytes before their pointers")
    func convertErrors() throws {
        let (scratch, ensemble) = try Self.example()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let events = ensemble.appendingPathComponent("events")
        try Self.event(store: Self.nfd, type: #""x""#).write(to: events.appendingPathComponent("50_\(Self.nfd)_0.cdeevent"))
        try Self.event(store: Self.nfc, globalCount: #""x""#).write(to: events.appendingPathComponent("50_\(Self.nfc)_0.cdeevent"))
        let run = try Run("convert", "--json", ensemble.path, scratch.appendingPathComponent("out").path)
        let errors = try JSONParser.parse(run.stdout)[JSONPointer(["errors"])]?.arrayValue ?? []
        // Whether each error of the two files is the NFD file's (its name holds the byte CC).
        let nfd = errors.compactMap { $0[JSONPointer(["file"])]?.stringValue }.filter { $0.contains("50_caf") }.map { Array($0.utf8).contains(0xCC) }
        #expect(nfd.contains(true) && nfd.contains(false), "\(run.stdout)")
        #expect(nfd == nfd.sorted { $0 && !$1 }, "\(run.stdout)")
    }
}
