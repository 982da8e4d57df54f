/// Writes JSON values in the toolkit's canonical form (Spec/v2-json.md, "Canonical output"):
/// keys sorted by UTF-8 bytes, numbers as their text, fixed string escaping.
public struct JSONWriter: Sendable {
    package enum Layout: Sendable {
        /// No whitespace at all: the bytes that identify a logical value.
        case compact
        /// Two-space indentation, one member per line: for people; same key order.
        case pretty
    }

    package var layout: Layout

    /// A writer of compact canonical JSON (Spec/v2-json.md 6).
    public init() { layout = .compact }

    package init(layout: Layout) { self.layout = layout }

    public func bytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(value, depth: 0, into: &output)
        return output
    }

    public func string(_ value: JSONValue) -> String { String(decoding: bytes(value), as: UTF8.self) }

    /// Appends `value` to `output`, for writers that stream a large document.
    public func append(_ value: JSONValue, to output: inout [UInt8]) { write(value, depth: 0, into: &output) }

    private func write(_ value: JSONValue, depth: Int, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): output.append(contentsOf: number.text.utf8)
        case .string(let string): Self.writeString(string, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { output.append(UInt8(ascii: ",")) }
                newline(depth + 1, into: &output)
                write(element, depth: depth + 1, into: &output)
            }
            if !elements.isEmpty { newline(depth, into: &output) }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            let sorted = object.members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (i, member) in sorted.enumerated() {
                if i > 0 { output.append(UInt8(ascii: ",")) }
                newline(depth + 1, into: &output)
                Self.writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                if layout == .pretty { output.append(UInt8(ascii: " ")) }
                write(member.value, depth: depth + 1, into: &output)
            }
            if !sorted.isEmpty { newline(depth, into: &output) }
            output.append(UInt8(ascii: "}"))
        }
    }

    private func newline(_ depth: Int, into output: inout [UInt8]) {
        guard layout == .pretty else { return }
        output.append(UInt8(ascii: "\n"))
        var indent = 2 * depth
        while indent > 0 {
            let count = min(indent, Self.spaces.count)
            output.append(contentsOf: Self.spaces[..<count])
            indent -= count
        }
    }

    /// Indentation is copied from here: appending a `repeatElement` took 90% of printing a deeply
    /// nested event in the debug build the tests run (generic code left unspecialized).
    private static let spaces = [UInt8](repeating: UInt8(ascii: " "), count: 128)

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `string` as a canonical JSON string (quotes and escapes included).
    public static func writeString(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        ExactString.withUTF8(of: string) { appendEscaped($0, into: &output) }
        output.append(UInt8(ascii: "\""))
    }

    /// The bytes between escapes are copied as runs: a state document is mostly strings, and
    /// appending them a byte at a time was the largest part of writing one. The next byte to
    /// escape is found 8 bytes at a time (``ByteLanes/escapeEnd(in:from:)``).
    private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        var runStart = 0
        while true {
            let index = ByteLanes.escapeEnd(in: bytes, from: runStart)
            guard index < bytes.count else { break }
            let byte = bytes[index]
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            runStart = index + 1
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            default:
                output.append(contentsOf: [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                    hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)],
                ])
            }
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
    }
}
