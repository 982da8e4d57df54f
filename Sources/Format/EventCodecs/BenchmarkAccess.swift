import JSONDocument
import EnsembleModel

// The Benchmarks package (Benchmarks/, a package of its own, so it sees only what is public)
// times the fast reading path and measures compression. These entry points are SPI, not API:
// a client sees them only with `@_spi(Benchmarks) import EventCodecs`, and they forward to the
// package types that do the work.

@_spi(Benchmarks)
extension V2JSONDecoder {
    /// `V2JSONFastDecoder.decodeEvent`: a single-file event straight from its bytes, or nil when
    /// only the general pipeline can tell.
    public static func decodeEventFast(_ bytes: [UInt8]) -> Event? { V2JSONFastDecoder.decodeEvent(bytes) }
}

@_spi(Benchmarks)
extension V2BinaryEncoder {
    /// `DataBlob.container`: the data-file container for `content` (Spec/data-blobs.md 2).
    public static func dataBlobContainer(_ content: [UInt8], deflate: Bool) -> [UInt8] { DataBlob.container(content, deflate: deflate) }
}
