#if FUZZING
import EventCodecs
import FileWrappers
import EnsembleModel
import JSONDocument
import KeyedArchive
import SchemaValidation

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

/// Feeds one input to every decoder of untrusted bytes. Rejections are fine; a crash, a hang or
/// an allocation beyond the limits is a bug, and libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
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
    if let fast = V2JSONFastDecoder.decodeEvent(bytes), fast != general {
        fatalError("the fast JSON decoder gave \(fast), the general pipeline \(general.map { "\($0)" } ?? "nothing")")
    }
    return 0
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
