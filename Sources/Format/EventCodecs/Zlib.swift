import CZlib
import Foundation

/// CRC-32 and raw DEFLATE from the system zlib (Spec/v2-binary.md, sections).
enum Zlib {
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            UInt32(CZlib.crc32(0, buffer.baseAddress, uInt(buffer.count)))
        }
    }

    /// Raw DEFLATE (RFC 1951), level 9.
    static func deflate(_ input: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard czlib_deflate_init_raw(&stream, 9) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))))
        var mutableInput = input
        let status = mutableInput.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = destination.baseAddress
                stream.avail_out = uInt(destination.count)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        return Array(output.prefix(Int(stream.total_out)))
    }

    enum InflateFailure: Error {
        case corrupt
        case tooLarge
    }

    /// Inflates raw DEFLATE, refusing output beyond `limit` bytes (a hostile stream can claim
    /// any size; it is never trusted).
    static func inflate(_ input: ArraySlice<UInt8>, limit: Int) throws(InflateFailure) -> [UInt8] {
        var stream = z_stream()
        guard czlib_inflate_init_raw(&stream) == Z_OK else { throw .corrupt }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var mutableInput = Array(input)
        var finished = false
        var failure: InflateFailure?
        mutableInput.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while !finished && failure == nil {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { destination in
                    stream.next_out = destination.baseAddress
                    stream.avail_out = uInt(destination.count)
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    if status == Z_STREAM_END { finished = true } else if status != Z_OK { failure = .corrupt }
                    return destination.count - Int(stream.avail_out)
                }
                if produced == 0 && !finished && failure == nil && stream.avail_in == 0 { failure = .corrupt }
                output.append(contentsOf: chunk.prefix(produced))
                if output.count > limit { failure = .tooLarge }
            }
        }
        if let failure { throw failure }
        guard stream.avail_in == 0 else { throw .corrupt }
        return output
    }
}
