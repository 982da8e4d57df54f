import JSONDocument

/// One value of a property list as a keyed archive needs it, with the archive's `CF$UID`
/// references kept as ``uid(_:)`` (Spec/device-state.md 3.1).
package indirect enum PropertyListValue: Hashable, Sendable {
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    /// Seconds from 2001-01-01T00:00:00Z.
    case date(Double)
    case data([UInt8])
    case string(String)
    /// A reference into the archive's `$objects`.
    case uid(UInt64)
    case array([PropertyListValue])
    /// Keys are told apart by their UTF-8 bytes, as Apple's readers tell them (Spec/README.md 4):
    /// two keys differing only in Unicode normalisation are two keys.
    case dictionary([ExactString: PropertyListValue])

    package static func == (lhs: PropertyListValue, rhs: PropertyListValue) -> Bool {
        switch (lhs, rhs) {
        case let (.bool(a), .bool(b)): a == b
        case let (.integer(a), .integer(b)): a == b
        case let (.real(a), .real(b)): a == b || (a.isNaN && b.isNaN)
        case let (.date(a), .date(b)): a == b || (a.isNaN && b.isNaN)
        case let (.data(a), .data(b)): a == b
        // By bytes: `String ==` takes canonically equivalent text for equal.
        case let (.string(a), .string(b)): ExactString(a) == ExactString(b)
        case let (.uid(a), .uid(b)): a == b
        case let (.array(a), .array(b)): a == b
        case let (.dictionary(a), .dictionary(b)): a == b
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .bool(let value): hasher.combine(0); hasher.combine(value)
        case .integer(let value): hasher.combine(1); hasher.combine(value)
        case .real(let value): hasher.combine(2); hasher.combine(value.isNaN ? Double.nan : value)
        case .date(let value): hasher.combine(3); hasher.combine(value.isNaN ? Double.nan : value)
        case .data(let value): hasher.combine(4); hasher.combine(value)
        case .string(let value): hasher.combine(5); hasher.combine(ExactString(value))
        case .uid(let value): hasher.combine(6); hasher.combine(value)
        case .array(let value): hasher.combine(7); hasher.combine(value)
        case .dictionary(let value): hasher.combine(8); hasher.combine(value)
        }
    }
}

extension FormatError.Code {
    /// The bytes are not a property list the archive reader takes (Spec/device-state.md 3.7).
    public static let archiveNotPropertyList = Self("archive.not-property-list")
    /// Bytes, objects or decoded values beyond the reader's limits.
    public static let archiveTooLarge = Self("archive.too-large")
    /// Nesting beyond the depth limit.
    public static let archiveTooDeep = Self("archive.too-deep")
    /// Not an `NSKeyedArchiver` archive: `$archiver`, `$version`, `$objects` or `$top` missing or wrong.
    public static let archiveNotKeyedArchive = Self("archive.not-keyed-archive")
    /// A `CF$UID` reference to no object of `$objects`.
    public static let archiveReferenceOutOfRange = Self("archive.reference-out-of-range")
    /// An object that contains itself through followed references.
    public static let archiveCycle = Self("archive.cycle")
    /// A `$class` that is not a class description.
    public static let archiveInvalidClass = Self("archive.invalid-class")
    /// A class the reader was not allowed to decode.
    public static let archiveClassNotAllowed = Self("archive.class-not-allowed")
    /// An object of an allowed class whose members are missing or of the wrong kind.
    public static let archiveInvalidObject = Self("archive.invalid-object")
}

extension PropertyListValue {
    /// Reads `bytes` as a binary (`bplist00`) or XML property list, at most `maximumBytes` long and
    /// nested at most `maximumDepth` deep (Spec/device-state.md 3.1).
    ///
    /// Both forms are read by hand, not by Foundation: Apple's binary writer shares strings,
    /// numbers and references between containers, which the project's general guard
    /// (Spec/model.md 8.5) refuses; Foundation on Linux gives `CF$UID` references back as an
    /// internal class, and leaks an error object for every malformed list it is given.
    package static func read(_ bytes: [UInt8], maximumBytes: Int, maximumDepth: Int) throws(FormatError) -> PropertyListValue {
        guard bytes.count <= maximumBytes else {
            throw FormatError(.archiveTooLarge, "a property list of \(bytes.count) bytes, more than the limit of \(maximumBytes)")
        }
        if bytes.starts(with: BinaryPropertyList.magic) {
            var reader = BinaryPropertyList(bytes, maximumDepth: maximumDepth)
            return try reader.read()
        }
        // Other binary versions (`bplist01`, `bplist15`...) are not read.
        guard !bytes.starts(with: Array("bplist".utf8)) else {
            throw FormatError(.archiveNotPropertyList, "a binary property list of a version other than 00", location: .init(offset: 0))
        }
        var reader = XMLPropertyList(bytes, maximumDepth: maximumDepth)
        return try reader.read()
    }
}
