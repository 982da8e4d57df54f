#if FUZZING
import DataModel
import EventCodecs
import FileWrappers
import EnsembleModel
import Foundation
import JSONDocument
import KeyedArchive
import RemoteFolder
import SchemaValidation
import TICDS

/// Keys rather than a password: a password costs 20,000 SHA-1 rounds per encrypted input, which
/// would slow the fuzzer a thousandfold; the layers around the key derivation are the same. Made
/// per input, so that the source's cached answer is freed with it (a global's cache is reported
/// by LeakSanitizer at exit).
func fuzzUnwrapper() -> Unwrapper {
    Unwrapper(
        password: PasswordSource { .keys(encryption: [UInt8](repeating: 1, count: 32), hmac: [UInt8](repeating: 2, count: 32)) },
        maximumBytes: 16 * 1024 * 1024)
}

/// Every class the toolkit ever allows in a keyed archive: Xcode's model classes (whose owner links
/// exercise the link path) and Ensembles 1.x's property change values.
let fuzzArchiveClasses: ArchiveClasses = {
    var classes = ArchiveClasses.xcodeModel
    classes.keyedClasses.merge(ArchiveClasses.ensembles.keyedClasses) { old, _ in old }
    return classes
}()

/// The groups of decoders an input goes to. `FUZZ_DECODERS` (a comma-separated list of these
/// names) narrows a run to some of them, so that each gets its share of executions and its own
/// statistics; unset, every input goes to every group but `webdav`, `s3`, `httpdate` and `model`.
/// Those reach Foundation code that leaks: XMLParser a string for each error of a document
/// (Fuzz/lsan.supp), DateFormatter a character set for some texts it does not read. With leak
/// detection on, libFuzzer would stop on them, or check every input for leaks at a few inputs a
/// second. Run them on their own, `FUZZ_DECODERS=webdav,s3,httpdate,model` (run.sh then turns
/// leak detection off).
enum FuzzGroup: String, CaseIterable {
    /// Event files, blobs, wrappers and keyed archives (the original decoders).
    case events
    /// TICoreDataSync's FZACryptor decryption (Spec/ticds.md 5).
    case fzacryptor
    /// TICoreDataSync change sets: the classifier, the SQLite reading, the keyed-archive payloads,
    /// AppliedSyncChangeSets (Spec/ticds.md 3.9, 4).
    case changeset
    /// TICoreDataSync's property lists (deviceInfo, documentInfo, recentsync) and IntegrityKey names.
    case plist
    /// A WebDAV PROPFIND multistatus answer (Spec/remote.md 3).
    case webdav
    /// An S3 ListBucketResult page and error document (Spec/remote.md 11.4).
    case s3
    /// Ensembles Server JSON answers (Spec/remote.md 12).
    case server
    /// HTTP dates (RFC 9110 5.6.7), as WebDAV listings give them.
    case httpdate
    /// A Core Data model's `contents` XML (Spec/model.md 3, 4), and the description and hash of
    /// a model it reads as.
    case model

    /// The groups of this run, read once from the environment.
    static let selected: Set<FuzzGroup> = {
        guard let names = ProcessInfo.processInfo.environment["FUZZ_DECODERS"], !names.isEmpty else {
            return Set(allCases).subtracting([.webdav, .s3, .httpdate, .model])
        }
        return Set(names.split(separator: ",").compactMap { FuzzGroup(rawValue: $0.trimmingCharacters(in: .whitespaces)) })
    }()
}

/// The sync key of the `encrypted` TICDS fixture (Fixtures/ticds/encrypted/facts.json), so that
/// its encrypted files decrypt in the corpus; derived from its password, it would cost 7,500
/// SHA-256 rounds per input.
let fuzzTICDSKey: [UInt8] = {
    let hex = Array("15279528d180c989c477f926a46016f534e9e9ae22cb86ffddf7bdca6d32ba24".utf8)
    return stride(from: 0, to: hex.count, by: 2).map { UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16) ?? 0 }
}()

/// Feeds one input to every decoder of untrusted bytes. Rejections are fine; a crash, a hang or
/// an allocation beyond the limits is a bug, and libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    let groups = FuzzGroup.selected
    if groups.contains(.fzacryptor) { fuzzFZACryptor(bytes) }
    if groups.contains(.changeset) { fuzzChangeSet(bytes) }
    if groups.contains(.plist) { fuzzTICDSPlist(bytes) }
    if groups.contains(.webdav) { _ = try? MultistatusReader.read(Data(bytes), maximumMembers: 1_000) }
    if groups.contains(.s3) {
        _ = try? ListBucketReader.read(Data(bytes), maximumKeys: 1_000)
        _ = S3ErrorReader.code(Data(bytes))
    }
    if groups.contains(.server) { fuzzServerAnswer(bytes) }
    if groups.contains(.model), let model = try? ModelXMLReader.parse(Data(bytes), displayPath: "contents", versionName: nil) {
        _ = model.modelHash
    }
    if groups.contains(.httpdate) {
        let text = String(decoding: bytes.prefix(256), as: UTF8.self)
        _ = MultistatusReader.date(text)
        _ = MultistatusReader.imfFixdate(text)
    }
    guard groups.contains(.events) else { return 0 }
    if let event = try? V2BinaryDecoder().decode(bytes) {
        _ = try? V2BinaryEncoder().encode(event)
        _ = try? V2JSONEncoder().encode(event)
    }
    _ = try? DataBlob.content(of: bytes)
    // The unwrapping layer (Spec/wrappers.md): detection, zip, RNCryptor, then the kind check.
    _ = ContentKind.detect(bytes)
    if let unwrapped = try? fuzzUnwrapper().unwrap(bytes) {
        _ = Unwrapper.kindError(unwrapped.kind, bytes: unwrapped.bytes, layers: unwrapped.layers)
    }
    _ = try? ZipArchive.readSingleEntry(bytes, maximumBytes: 16 * 1024 * 1024)
    // Keyed archives (Spec/device-state.md 3): binary and XML property lists.
    _ = try? KeyedArchiveReader(classes: fuzzArchiveClasses).read(bytes)
    let general = generalEvent(bytes)
    // The fast JSON decoder may only take an input the general pipeline takes, and must then give
    // its event (Spec/v2-json.md 4): anything else stops the fuzzer, which keeps the input.
    let fast = V2JSONFastDecoder.decodeEvent(bytes)
    if let fast, fast != general {
        fatalError("the fast JSON decoder gave \(fast), the general pipeline \(general.map { "\($0)" } ?? "nothing")")
    }
    // Its numbered form is taken exactly where its event is, with as many changes.
    let numbered = V2JSONFastDecoder.decodeNumbered(bytes)
    if numbered?.changes.changes.count != fast?.objectChanges.count {
        fatalError(
            "the fast JSON decoder's numbered form gave \(numbered.map { "\($0.changes)" } ?? "nothing"), its event \(fast.map { "\($0)" } ?? "nothing")")
    }
    return 0
}

/// FZACryptor (Spec/ticds.md 5.3): the input as a whole file, whose HMAC almost never matches,
/// and the input with its HMAC recomputed, which reaches the decryption and the padding check;
/// what decrypts goes to the readers of plain TICDS files.
func fuzzFZACryptor(_ bytes: [UInt8]) {
    _ = try? FZACryptor.decrypt(bytes, key: fuzzTICDSKey)
    // The longest prefix that has a file's length once the HMAC is added.
    guard bytes.count >= FZACryptor.minimumLength - 32 else { return }
    let message = Array(bytes.prefix(64 + (bytes.count - 64) / 16 * 16))
    let signed = message + FZACryptor.hmac(message, key: fuzzTICDSKey)
    if let plain = try? FZACryptor.decrypt(signed, key: fuzzTICDSKey) {
        fuzzChangeSet(plain)
        fuzzTICDSPlist(plain)
    }
}

/// A decrypted sync change set as the folder reader takes it (Spec/ticds.md 4): classified by its
/// first bytes, read as SQLite when it says it is (and as AppliedSyncChangeSets), and the input
/// as one change's keyed-archive payload.
func fuzzChangeSet(_ bytes: [UInt8]) {
    if ChangeSetForm.detect(bytes) == .sqlite {
        _ = try? SyncChangeStore.changes(bytes)
        _ = try? SyncChangeStore.appliedSets(bytes)
    }
    _ = try? SyncChangeStore.payload(bytes)
}

/// The folder's property lists (Spec/ticds.md 3) and, with the input split at NUL bytes, the
/// names of an `IntegrityKey/` folder.
func fuzzTICDSPlist(_ bytes: [UInt8]) {
    _ = try? TICDSFolder.dictionary(bytes)
    _ = TICDSFolder.integrityKeys(bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
}

/// An Ensembles Server answer (Spec/remote.md 12): the success check, then what `fileexists`,
/// `listdir` and `downloadurls` take from it.
func fuzzServerAnswer(_ bytes: [UInt8]) {
    guard let object = try? EnsemblesServerProtocol.answer(Data(bytes), endpoint: "listdir", file: ".") else { return }
    _ = EnsemblesServerProtocol.flag(object, "exists")
    if let names = try? EnsemblesServerProtocol.listedNames(object, file: ".") {
        for (name, _) in names { _ = RemoteSnapshot.unsafeReason(name) }
    }
    for value in object["urls"]?.arrayValue ?? [] {
        if let text = value.stringValue { _ = EnsemblesServerProtocol.downloadURL(text, folderIsHTTP: false) }
    }
}

/// The event the general JSON pipeline (strict parser, v2 event schema, ``V2JSONDecoder``) reads
/// in `bytes` with nothing to report, or nil.
func generalEvent(_ bytes: [UInt8]) -> Event? {
    guard let json = try? JSONParser.parse(bytes) else { return nil }
    guard let decoded = try? V2JSONDecoder().decodeEvent(json), decoded.unknownKeys.isEmpty,
        (try? BundledSchema.v2Event.validate(json))?.isEmpty == true
    else { return nil }
    return decoded.event
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// SwiftPM links an executable's entry point as `<target>_main`; hand control to libFuzzer.
@_cdecl("FuzzDecoders_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments, fuzzOneInput)
}
#else
/// Built without the Fuzzing trait (by `swift build`, so that the target keeps compiling).
@main
enum FuzzDecoders {
    static func main() {
        print("FuzzDecoders is libFuzzer's entry point: run Fuzz/run.sh [SECONDS], which builds it with the Fuzzing trait")
    }
}
#endif
