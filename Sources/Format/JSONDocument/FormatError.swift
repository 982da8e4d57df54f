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

/// The Unreadable object of Spec/inspect.md 3.1 (and the Error object of Spec/convert.md):
/// `file`, `code`, `pointer`, `offset` and `message`. A missing file is written `""`; line and
/// column are not part of it and are not read back.
extension FormatError: Codable {
    private enum CodingKeys: String, CodingKey {
        case file, code, pointer, offset, message
    }

    /// Reads an Unreadable object; a pointer that is not RFC 6901 text is refused.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var pointer: JSONPointer?
        if let text = try container.decodeIfPresent(String.self, forKey: .pointer) {
            guard let parsed = JSONPointer(parsing: text) else {
                throw DecodingError.dataCorruptedError(forKey: .pointer, in: container, debugDescription: "not an RFC 6901 pointer")
            }
            pointer = parsed
        }
        self.init(
            Code(try container.decode(String.self, forKey: .code)), try container.decode(String.self, forKey: .message),
            location: Location(
                file: try container.decode(String.self, forKey: .file), offset: try container.decodeIfPresent(Int.self, forKey: .offset),
                pointer: pointer))
    }

    /// Writes the Unreadable object, every member present.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(location.file ?? "", forKey: .file)
        try container.encode(code.rawValue, forKey: .code)
        // Explicit nulls: the document has every member (Spec/inspect.md 3.1).
        try container.encode(location.pointer?.description, forKey: .pointer)
        try container.encode(location.offset, forKey: .offset)
        try container.encode(message, forKey: .message)
    }
}

extension FormatError.Location {
    /// Byte `offset` of `bytes` with its line and column (from 1, counted in bytes; lines end at
    /// LF, Spec/README.md section 4): where a parser, or a check made before one, stops.
    package init(file: String? = nil, offset: Int, in bytes: some Collection<UInt8>) {
        var line = 1, lineStart = 0
        for (index, byte) in bytes.prefix(offset).enumerated() where byte == 0x0A {
            line += 1
            lineStart = index + 1
        }
        self.init(file: file, offset: offset, line: line, column: offset - lineStart + 1)
    }
}
