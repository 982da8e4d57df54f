import DataModel
import Foundation
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
    case dictionary([String: PropertyListValue])
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
    /// Binary lists are read by ``BinaryPropertyList``, not Foundation: Apple's writer shares
    /// strings, numbers and references between containers, which the project's general guard
    /// (Spec/model.md 8.5) refuses and Foundation on Linux gives back as an internal UID class.
    /// XML lists pass that guard first, then Foundation parses them.
    package static func read(_ bytes: [UInt8], maximumBytes: Int, maximumDepth: Int) throws(FormatError) -> PropertyListValue {
        guard bytes.count <= maximumBytes else {
            throw FormatError(.archiveTooLarge, "a property list of \(bytes.count) bytes, more than the limit of \(maximumBytes)")
        }
        if bytes.starts(with: BinaryPropertyList.magic) {
            var reader = BinaryPropertyList(bytes, maximumDepth: maximumDepth)
            return try reader.read()
        }
        if let problem = PropertyListGuard.problem(bytes, limit: maximumBytes) {
            throw FormatError(.archiveNotPropertyList, problem)
        }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        } catch {
            throw FormatError(.archiveNotPropertyList, "not a property list: \(error.localizedDescription)")
        }
        return try converted(object, at: .root, depth: 1, maximumDepth: maximumDepth)
    }

    /// Foundation's objects as values. Foundation turns both a binary UID and an XML
    /// `<dict><key>CF$UID</key><integer>n</integer></dict>` into an object of its own internal
    /// class, whose one stored integer is read through reflection.
    private static func converted(_ object: Any, at pointer: JSONPointer, depth: Int, maximumDepth: Int) throws(FormatError) -> PropertyListValue {
        if type(of: object) == Bool.self, let value = object as? Bool { return .bool(value) }
        if let string = object as? String { return .string(string) }
        if let data = object as? Data { return .data([UInt8](data)) }
        if let date = object as? Date { return .date(date.timeIntervalSinceReferenceDate) }
        if let number = object as? NSNumber {
            switch String(cString: number.objCType) {
            case "c", "B": return .bool(number.boolValue)
            case "f", "d": return .real(number.doubleValue)
            case "Q" where number.uint64Value > UInt64(Int64.max):
                throw FormatError(.archiveNotPropertyList, "an integer beyond 64-bit signed", at: pointer)
            default: return .integer(number.int64Value)
            }
        }
        if let array = object as? [Any] {
            guard depth < maximumDepth else { throw FormatError(.archiveTooDeep, "nested deeper than \(maximumDepth)", at: pointer) }
            var values: [PropertyListValue] = []
            values.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                values.append(try converted(element, at: pointer / index, depth: depth + 1, maximumDepth: maximumDepth))
            }
            return .array(values)
        }
        if let dictionary = object as? [String: Any] {
            guard depth < maximumDepth else { throw FormatError(.archiveTooDeep, "nested deeper than \(maximumDepth)", at: pointer) }
            var values: [String: PropertyListValue] = [:]
            for (key, element) in dictionary {
                values[key] = try converted(element, at: pointer / key, depth: depth + 1, maximumDepth: maximumDepth)
            }
            return .dictionary(values)
        }
        if String(describing: type(of: object)).hasSuffix("KeyedArchiverUID"),
            let stored = Mirror(reflecting: object).children.first(where: { $0.label == "value" })?.value
        {
            if let value = stored as? UInt32 { return .uid(UInt64(value)) }
            if let value = stored as? UInt64 { return .uid(value) }
            if let value = stored as? Int, value >= 0 { return .uid(UInt64(value)) }
        }
        throw FormatError(.archiveNotPropertyList, "a property list value of an unknown kind (\(type(of: object)))", at: pointer)
    }
}
