/// An error found in a file the toolkit was asked to read: it always says what (a stable
/// ``Code``), where (``Location``) and why (``message``).
///
/// `Code` is a struct rather than an enum so that later formats can add codes without
/// breaking clients that switch over the known ones.
public struct FormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, dotted identifier such as `json.duplicate-key`; listed in `Spec/README.md`.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Comparable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
        public static func < (lhs: Code, rhs: Code) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Where in a file an error was found. Syntax errors carry a byte position; structural
    /// errors carry a JSON pointer; either may be absent.
    public struct Location: Hashable, Sendable {
        public var file: String?
        /// 0-based byte offset into the file.
        public var offset: Int?
        /// 1-based line and column (the column counts bytes).
        public var line: Int?
        public var column: Int?
        public var pointer: JSONPointer?

        public init(
            file: String? = nil, offset: Int? = nil, line: Int? = nil, column: Int? = nil,
            pointer: JSONPointer? = nil
        ) {
            self.file = file
            self.offset = offset
            self.line = line
            self.column = column
            self.pointer = pointer
        }
    }

    public var code: Code
    /// One line for a person; informative only, never part of a contract.
    public var message: String
    public var location: Location

    public init(_ code: Code, _ message: String, location: Location = Location()) {
        self.code = code
        self.message = message
        self.location = location
    }

    public init(_ code: Code, _ message: String, at pointer: JSONPointer) {
        self.init(code, message, location: Location(pointer: pointer))
    }

    /// The same error, attributed to `file`.
    public func inFile(_ file: String) -> FormatError {
        var copy = self
        copy.location.file = file
        return copy
    }

    public var description: String {
        var place: [String] = []
        if let file = location.file { place.append(file) }
        if let line = location.line, let column = location.column {
            place.append("line \(line), column \(column)")
        }
        if let offset = location.offset { place.append("byte \(offset)") }
        if let pointer = location.pointer { place.append("at \(pointer.displayString)") }
        let prefix = place.isEmpty ? "" : place.joined(separator: ", ") + ": "
        return "\(prefix)\(message) [\(code)]"
    }
}

extension FormatError.Code {
    public static let jsonSyntax = Self("json.syntax")
    public static let jsonUnexpectedEnd = Self("json.unexpected-end")
    public static let jsonInvalidUTF8 = Self("json.invalid-utf8")
    public static let jsonDuplicateKey = Self("json.duplicate-key")
    public static let jsonTrailingComma = Self("json.trailing-comma")
    public static let jsonTooDeep = Self("json.too-deep")
    public static let jsonTooLarge = Self("json.too-large")
}
