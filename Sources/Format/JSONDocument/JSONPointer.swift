/// An RFC 6901 JSON pointer: the address of a value inside a JSON document.
public struct JSONPointer: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Unescaped reference tokens, outermost first.
    public private(set) var tokens: [String]

    public init(_ tokens: [String] = []) { self.tokens = tokens }

    /// The document itself (the empty string in RFC 6901 form).
    public static let root = JSONPointer()

    public func appending(_ token: String) -> JSONPointer {
        var copy = self
        copy.tokens.append(token)
        return copy
    }

    public func appending(_ index: Int) -> JSONPointer { appending(String(index)) }

    public static func / (lhs: JSONPointer, rhs: String) -> JSONPointer { lhs.appending(rhs) }
    public static func / (lhs: JSONPointer, rhs: Int) -> JSONPointer { lhs.appending(rhs) }

    /// RFC 6901 text: `""` for the root, `/a~1b/0` for `["a/b", "0"]`.
    public var description: String {
        var text = ""
        for token in tokens {
            text += "/"
            // Most tokens need no escape: copied whole rather than character by character,
            // which made sorting a million pointers slow (measured: Benchmarks/README.md).
            if !token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) {
                text += token
            } else {
                text += String(token.flatMap { (c: Character) -> [Character] in c == "~" ? ["~", "0"] : c == "/" ? ["~", "1"] : [c] })
            }
        }
        return text
    }

    /// Like ``description`` but shows the root as `/` rather than an empty string.
    public var displayString: String { tokens.isEmpty ? "(document root)" : description }

    /// Parses RFC 6901 text; returns nil for text that is not a pointer.
    public init?(parsing text: String) {
        if text.isEmpty { self.init(); return }
        guard text.hasPrefix("/") else { return nil }
        var result: [String] = []
        for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var iterator = raw.makeIterator()
            while let c = iterator.next() {
                if c == "~" {
                    switch iterator.next() {
                    case "0": token.append("~")
                    case "1": token.append("/")
                    default: return nil
                    }
                } else {
                    token.append(c)
                }
            }
            result.append(token)
        }
        self.init(result)
    }

    /// Orders pointers by the UTF-8 bytes of their RFC 6901 text (the Spec's string order).
    public static func < (lhs: JSONPointer, rhs: JSONPointer) -> Bool {
        lhs.description.utf8.lexicographicallyPrecedes(rhs.description.utf8)
    }

    /// Equal when their tokens have the same bytes, as `<` orders them: members named in NFC and
    /// in NFD are two members (Swift's `==` on strings would call them one).
    public static func == (lhs: JSONPointer, rhs: JSONPointer) -> Bool {
        lhs.tokens.count == rhs.tokens.count && zip(lhs.tokens, rhs.tokens).allSatisfy { ExactString($0) == ExactString($1) }
    }

    public func hash(into hasher: inout Hasher) {
        for token in tokens { hasher.combine(ExactString(token)) }
    }
}
