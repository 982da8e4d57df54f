import CZlib
import Foundation

/// CRC-32 and raw DEFLATE from the system zlib (Spec/v2-binary.md, sections).
package enum Zlib {
    package static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            UInt32(CZlib.crc32(0, buffer.baseAddress, uInt(buffer.count)))
        }
    }

    /// Raw DEFLATE (RFC 1951), level 9.
    package static func deflate(_ input: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard czlib_deflate_init_raw(&stream, 9) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let result = finish(&stream, input: input[...], capacity: Int(deflateBound(&stream, uLong(input.count))), CZlib.deflate)
        guard result.status == Z_STREAM_END else { return nil }
        return Array(result.output.prefix(result.produced))
    }

    /// One call of `step` (zlib's `deflate` or `inflate`) with `Z_FINISH` over the whole input,
    /// into an output of `capacity` bytes, on a stream its caller set up and ends: the one-shot
    /// work of the deflate writer and of a zip entry (FileWrappers), which also needs to know
    /// how many bytes were read.
    package static func finish(
        _ stream: inout z_stream, input: ArraySlice<UInt8>, capacity: Int, _ step: (UnsafeMutablePointer<z_stream>?, Int32) -> Int32
    ) -> (status: Int32, output: [UInt8], produced: Int, consumed: Int) {
        var output = [UInt8](repeating: 0, count: capacity)
        var source = Array(input)
        let status = source.withUnsafeMutableBufferPointer { sourceBuffer in
            output.withUnsafeMutableBufferPointer { destination in
                stream.next_in = sourceBuffer.baseAddress
                stream.avail_in = uInt(sourceBuffer.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = uInt(destination.count)
                return step(&stream, Z_FINISH)
            }
        }
        return (status, output, Int(stream.total_out), Int(stream.total_in))
    }

    /// The one compression-ratio rule of the Spec (v2-binary.md 8, data-blobs.md 4 and 5): a
    /// reader refuses deflated bytes that inflate to more than this many times their stored
    /// length, so a writer stores bytes raw rather than deflate them beyond it. Sharing the rule
    /// is what makes every file the toolkit writes a file it reads.
    /// 100, so that no file under 1 MB inflates to more than 100 MB (Spec/README.md 6.2).
    package static let maximumRatio = 100

    /// Whether `stored` deflated bytes may stand for `inflated` bytes under ``maximumRatio``.
    package static func ratioAllows(stored: Int, inflated: Int) -> Bool { inflated <= max(1, stored) * maximumRatio }

    /// `input` deflated when that is smaller and within the ratio rule; nil when it must be
    /// stored as it is.
    package static func deflateForStorage(_ input: [UInt8]) -> [UInt8]? {
        guard let deflated = deflate(input), deflated.count < input.count, ratioAllows(stored: deflated.count, inflated: input.count) else {
            return nil
        }
        return deflated
    }

    package enum InflateFailure: Error {
        case corrupt
        case tooLarge
    }

    /// Inflates raw DEFLATE, refusing output beyond `limit` bytes (a hostile stream can claim
    /// any size; it is never trusted).
    package static func inflate(_ input: ArraySlice<UInt8>, limit: Int) throws(InflateFailure) -> [UInt8] {
        let stream = try InflateStream(limit: limit)
        var output: [UInt8] = []
        try stream.feed(input) { output.append(contentsOf: $0) }
        try stream.finish()
        return output
    }

    /// Raw DEFLATE inflated chunk by chunk, so that a large stream is never held whole: each
    /// `feed` hands its output to a closure in pieces of at most 64 KiB.
    package final class InflateStream {
        private var stream = z_stream()
        private let limit: Int
        private var produced = 0
        private var ended = false
        private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

        package init(limit: Int) throws(InflateFailure) {
            self.limit = limit
            guard czlib_inflate_init_raw(&stream) == Z_OK else { throw .corrupt }
        }

        deinit { inflateEnd(&stream) }

        /// Inflates the next stored bytes. Input after the end of the stream is `corrupt`, and so
        /// is output beyond the limit `tooLarge`, both reported as soon as they are met.
        package func feed(_ input: ArraySlice<UInt8>, _ sink: (ArraySlice<UInt8>) -> Void) throws(InflateFailure) {
            guard !input.isEmpty else { return }
            guard !ended else { throw .corrupt }
            var mutableInput = Array(input)
            var failure: InflateFailure?
            mutableInput.withUnsafeMutableBufferPointer { source in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                while failure == nil && !ended {
                    var stalled = false
                    let count: Int = chunk.withUnsafeMutableBufferPointer { destination in
                        stream.next_out = destination.baseAddress
                        stream.avail_out = uInt(destination.count)
                        switch CZlib.inflate(&stream, Z_NO_FLUSH) {
                        case Z_STREAM_END: ended = true
                        case Z_OK: break
                        // No progress is possible without more input.
                        case Z_BUF_ERROR: stalled = true
                        default: failure = .corrupt
                        }
                        return destination.count - Int(stream.avail_out)
                    }
                    produced += count
                    if produced > limit { failure = .tooLarge; break }
                    if count > 0 { sink(chunk[..<count]) }
                    // All input consumed and the output buffer not filled: zlib needs more input.
                    if stalled || (stream.avail_in == 0 && stream.avail_out > 0) { break }
                }
                if failure == nil && ended && stream.avail_in > 0 { failure = .corrupt }
                stream.next_in = nil
            }
            if let failure { throw failure }
        }

        /// The stream must have reached its final block.
        package func finish() throws(InflateFailure) {
            guard ended else { throw .corrupt }
        }
    }
}
