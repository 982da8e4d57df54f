import EventCodecs
import JSONDocument

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
    if let json = try? JSONParser.parse(bytes) {
        _ = try? V2JSONDecoder().decodeEvent(json)
    }
    return 0
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
