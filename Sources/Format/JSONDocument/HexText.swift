/// `bytes` as lowercase hexadecimal digits, two to a byte, most significant first: how digests,
/// keys and hashes are written in reports, file names and signatures. Written digit by digit
/// rather than by `String(format: "%02x")`, which goes through Foundation's formatter once per
/// byte (a fifth of `inspect --sqlite`'s time on a folder of 100,000 files, one digest each).
package func lowercaseHex(_ bytes: some Sequence<UInt8>) -> String {
    // 0-9 from "0", 10-15 from "a".
    func digit(_ value: UInt8) -> UInt8 { value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value }
    var text: [UInt8] = []
    text.reserveCapacity(bytes.underestimatedCount * 2)
    for byte in bytes {
        text.append(digit(byte >> 4))
        text.append(digit(byte & 0x0F))
    }
    return String(decoding: text, as: UTF8.self)
}
