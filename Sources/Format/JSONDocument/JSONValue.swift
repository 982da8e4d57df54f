import Foundation

/// A parsed JSON value that loses nothing: numbers keep their source text (so an int64 above
/// 2^53 is never rounded through a double) and objects keep their members in source order.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    public var numberValue: JSONNumber? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// The JSON type name as JSON Schema spells it (`integer` is reported as `number`).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Strings are equal only when their code points are (not Swift's canonical equivalence); numbers
    /// when their values are; objects regardless of member order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.string(a), .string(b)): ExactString(a) == ExactString(b)
        case let (.array(a), .array(b)): a == b
        case let (.object(a), .object(b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let flag): hasher.combine(flag)
        case .number(let number): hasher.combine(number)
        case .string(let string): hasher.combine(ExactString(string))
        case .array(let array): hasher.combine(array)
        case .object(let object): hasher.combine(object)
        }
    }

    /// The value the pointer addresses, or nil when it addresses nothing.
    public subscript(pointer: JSONPointer) -> JSONValue? {
        var current = self
        for token in pointer.tokens {
            switch current {
            case .object(let object):
                guard let next = object[token] else { return nil }
                current = next
            case .array(let array):
                guard let index = Int(token), array.indices.contains(index) else { return nil }
                current = array[index]
            default:
                return nil
            }
        }
        return current
    }
}

extension JSONValue {
    public init(_ int: Int64) { self = .number(JSONNumber(int)) }
    public init(_ double: Double) { self = .number(JSONNumber(double)) }
}

/// A JSON object's members in source order, with keys known to be unique (the parser rejects
/// duplicates).
public struct JSONObject: Hashable, Sendable, Sequence {
    public private(set) var members: [(key: String, value: JSONValue)]
    /// Positions by key, only for objects larger than ``indexThreshold``: most objects of an event
    /// have a handful of members, where a scan costs less than building a dictionary for each
    /// (Benchmarks/README.md, the reading pipeline by stage), and a report's object per event
    /// has nine to a dozen, where the dictionary was half the report's memory (Benchmarks/README.md,
    /// memory per event).
    private var index: [ExactString: Int]?
    private static let indexThreshold = 16

    public init() {
        members = []
        index = nil
    }

    /// Builds an object; a later duplicate key replaces the earlier value.
    public init(_ members: [(String, JSONValue)]) {
        self.init()
        for (key, value) in members { self[key] = value }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }

    private func position(of key: String) -> Int? {
        let wanted = ExactString(key)
        if let index { return index[wanted] }
        return members.firstIndex { ExactString($0.key) == wanted }
    }

    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let position = position(of: key) {
                if let newValue {
                    members[position].value = newValue
                } else {
                    members.remove(at: position)
                    if index != nil { index = Dictionary(uniqueKeysWithValues: members.enumerated().map { (ExactString($1.key), $0) }) }
                }
            } else if let newValue {
                members.append((key, newValue))
                if index != nil {
                    index?[ExactString(key)] = members.count - 1
                } else if members.count > Self.indexThreshold {
                    index = Dictionary(uniqueKeysWithValues: members.enumerated().map { (ExactString($1.key), $0) })
                }
            }
        }
    }

    public func contains(_ key: String) -> Bool { position(of: key) != nil }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        members.makeIterator()
    }

    /// Member order is not part of an object's meaning.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for key in keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) { hasher.combine(ExactString(key)) }
    }
}

/// A string compared and hashed by its UTF-8 bytes.
///
/// Swift's `String ==` treats canonically equivalent strings as equal ("Café" spelled with
/// U+00E9 or with e + U+0301), but JSON keys and Ensembles identifiers are distinct whenever
/// their code points differ; every uniqueness check in the toolkit goes through this type.
/// Package only (no user names it); usable from inline for the inlinable `utf8Precedes`
/// and `exactlyEqual`.
@usableFromInline
package struct ExactString: Hashable, Sendable {
    package let value: String

    @usableFromInline
    package init(_ value: String) { self.value = value }

    // Native strings are read in place; copying them to call the mutating `withUTF8` cost a
    // retain and a release per comparison, a large share of a replay (measured: Benchmarks/README.md).
    @usableFromInline
    package static func == (lhs: ExactString, rhs: ExactString) -> Bool {
        if identical(lhs.value, rhs.value) { return true }
        return withUTF8(of: lhs.value) { left in withUTF8(of: rhs.value) { right in sameBytes(left, right) } }
    }

    /// Whether two byte runs are equal, compared with `memcmp` (the generic `elementsEqual`
    /// compares a byte at a time).
    @usableFromInline
    package static func sameBytes(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count, let l = left.baseAddress, let r = right.baseAddress else { return left.count == right.count }
        return memcmp(l, r, left.count) == 0
    }

    /// The first 8 UTF-8 bytes of `string` as a big-endian number, padded with zero bytes: a
    /// string with a smaller key comes first in UTF-8 byte order, and strings with different keys
    /// differ (equal keys say nothing). Comparing keys first spares most byte comparisons.
    package static func prefixKey(_ string: String) -> UInt64 { withUTF8(of: string, prefixKey) }

    /// ``prefixKey(_:)`` of the string with these UTF-8 bytes.
    package static func prefixKey(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard bytes.count < 8 else { return UInt64(bigEndian: UnsafeRawBufferPointer(bytes).loadUnaligned(as: UInt64.self)) }
        return bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (56 - 8 * UInt64($1.offset)) }
    }

    /// Calls `body` with the UTF-8 bytes of `string`: a native string's in place, as in `==`,
    /// another's from a copy. (The mutating `withUTF8` needs a copy of every string, a retain
    /// and a release: an atomic write to memory another core may have just written.)
    @inlinable
    package static func withUTF8<R>(of string: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let result = try string.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = string
        return try copy.withUTF8(body)
    }

    /// Whether two strings have the same representation: the same bits are the same string (one
    /// small string's inline bytes, or one storage and count). Entity and property names, compared
    /// for every change, are usually settled so without reading their bytes; false says nothing.
    @inline(__always)
    package static func identical(_ a: String, _ b: String) -> Bool {
        typealias Bits = (UInt64, UInt64)
        return MemoryLayout<String>.size == MemoryLayout<Bits>.size && unsafeBitCast(a, to: Bits.self) == unsafeBitCast(b, to: Bits.self)
    }

    /// A small number from a string's representation, for a cache of ``identical(_:_:)`` strings.
    @inline(__always)
    package static func representationHash(_ string: String) -> UInt64 {
        guard MemoryLayout<String>.size == MemoryLayout<(UInt64, UInt64)>.size else { return 0 }
        let bits = unsafeBitCast(string, to: (UInt64, UInt64).self)
        return (bits.0 ^ bits.1 &* 0x9E37_79B9_7F4A_7C15) &* 0xBF58_476D_1CE4_E5B9
    }

    /// The length first: bytes alone run together in a key of several strings ("ab" + "c" and
    /// "a" + "bc" fed the hasher the same bytes).
    @usableFromInline
    package func hash(into hasher: inout Hasher) {
        Self.withUTF8(of: value) {
            hasher.combine($0.count)
            hasher.combine(bytes: UnsafeRawBufferPointer($0))
        }
    }

    /// What follows `prefix` in `string` when the bytes of `string` start with those of
    /// `prefix`, else nil. `hasPrefix` compares characters: it takes a path below `café` in NFD for
    /// one below `café` in NFC, and misses `root/` in `root/` + U+0301, whose slash and accent
    /// are one character.
    package static func remainder(of string: String, after prefix: String) -> String? {
        guard string.utf8.starts(with: prefix.utf8) else { return nil }
        return String(decoding: string.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }

    /// What comes before `suffix` in `name` when the bytes of `name` end with those of `suffix`,
    /// else nil. `hasSuffix` and `dropLast` work on characters: a name ending in a prepended
    /// mark (U+0600) joins it with the `.` of `.plist` into one character, and was not taken as
    /// ending with `.plist`.
    package static func stem(of name: String, before suffix: String) -> String? {
        let bytes = Array(name.utf8), tail = Array(suffix.utf8)
        guard bytes.count >= tail.count, bytes.suffix(tail.count).elementsEqual(tail) else { return nil }
        return String(decoding: bytes.dropLast(tail.count), as: UTF8.self)
    }

    /// The pieces of `path` between its `/` bytes. `split(separator: "/")` splits at characters,
    /// and a slash followed by a combining mark is one character: `../` + U+0301 + `x` stayed
    /// one piece, not `..` and U+0301 + `x`, and passed a check for `..`.
    package static func components(of path: String, omittingEmpty: Bool = false) -> [String] {
        path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: omittingEmpty).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension Dictionary where Key == ExactString {
    /// The entries with their keys in UTF-8 byte order.
    package var inUTF8Order: [(key: ExactString, value: Value)] {
        sorted { $0.key.value.utf8.lexicographicallyPrecedes($1.key.value.utf8) }
    }

    /// The value for the name with exactly these UTF-8 bytes: tables of names (a model's
    /// entities and properties) are looked up by the strings events and files hold.
    package subscript(_ name: String) -> Value? {
        get { self[ExactString(name)] }
        set { self[ExactString(name)] = newValue }
    }
}
