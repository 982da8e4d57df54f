/// Limits and dialect switches for ``JSONParser``. The defaults are the ones `Spec/v2-json.md`
/// names; every limit exists so that a hostile file cannot make a reader allocate without bound.
public struct JSONReadingOptions: Sendable {
    /// Accept a comma before `}` or `]` (the 1.x-style test logs have them). Off by default.
    public var allowsTrailingCommas = false
    public var maximumBytes = 256 * 1024 * 1024
    /// Arrays and objects nested deeper than this are rejected (`json.too-deep`).
    public var maximumDepth = 64
    public var maximumStringBytes = 16 * 1024 * 1024
    public var maximumNumberLength = 1_000
    /// The most values the document may hold, from the size of its file as stored; nil: no
    /// budget (`json.too-large`, Spec/README.md 6.2).
    package var valueBudget: DecodedValueBudget?

    public init() {}

    public static let strict = JSONReadingOptions()
    public static var lenient: JSONReadingOptions {
        var options = JSONReadingOptions()
        options.allowsTrailingCommas = true
        return options
    }
}

/// A strict RFC 8259 parser that keeps number text, rejects duplicate keys and reports every
/// error with its byte offset, line and column.
///
/// Written by hand because no JSON reader available to the package keeps int64 values and
/// decimal text exactly, refuses duplicate keys, reports positions, and offers the lenient
/// trailing-comma mode the 1.x dialect needs.
public struct JSONParser {
    private let bytes: [UInt8]
    private let options: JSONReadingOptions
    private var position = 0
    private var depth = 0
    /// Values still allowed by ``JSONReadingOptions/valueBudget``.
    private var valuesLeft: Int

    /// Parses a whole document. Throws ``FormatError`` with a `json.*` code.
    public static func parse<Bytes: Collection<UInt8>>(_ input: Bytes, options: JSONReadingOptions = .strict) throws(FormatError) -> JSONValue {
        var parser = JSONParser(bytes: Array(input), options: options)
        return try parser.parseDocument()
    }

    /// ``parse(_:options:)`` that also says how many values it read, when it returns and when it
    /// throws: a reader that parses several documents of one file spends one budget on them.
    public static func parse<Bytes: Collection<UInt8>>(
        _ input: Bytes, options: JSONReadingOptions, valuesRead: inout Int
    ) throws(FormatError) -> JSONValue {
        var parser = JSONParser(bytes: Array(input), options: options)
        let budget = parser.valuesLeft
        defer { valuesRead = budget - parser.valuesLeft }
        return try parser.parseDocument()
    }

    public static func parse(_ text: String, options: JSONReadingOptions = .strict) throws(FormatError) -> JSONValue {
        try parse(Array(text.utf8), options: options)
    }

    private init(bytes: [UInt8], options: JSONReadingOptions) {
        self.bytes = bytes
        self.options = options
        valuesLeft = options.valueBudget?.maximumValues ?? .max
    }

    private mutating func parseDocument() throws(FormatError) -> JSONValue {
        if bytes.count > options.maximumBytes {
            throw error(.jsonTooLarge, "the document is \(bytes.count) bytes, over the limit of \(options.maximumBytes)", at: options.maximumBytes)
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw error(.jsonSyntax, "the document starts with a UTF-8 byte order mark, which JSON text must not have", at: 0)
        }
        let value = try parseValue(pointer: .root)
        skipWhitespace()
        if position < bytes.count {
            throw error(.jsonSyntax, "unexpected \(describe(bytes[position])) after the end of the JSON document", at: position)
        }
        return value
    }

    // MARK: - Values

    private mutating func parseValue(pointer: JSONPointer) throws(FormatError) -> JSONValue {
        skipWhitespace()
        guard position < bytes.count else {
            throw error(.jsonUnexpectedEnd, "the file ends where a value was expected", at: position)
        }
        // Counted before the value is built, so the error comes before the memory.
        valuesLeft -= 1
        if valuesLeft < 0, let budget = options.valueBudget {
            throw error(.jsonTooLarge, budget.exceededMessage("JSON values"), at: position)
        }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(pointer: pointer)
        case UInt8(ascii: "["): return try parseArray(pointer: pointer)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case UInt8(ascii: "N"), UInt8(ascii: "I"):
            throw error(.jsonSyntax, "NaN and Infinity are not JSON; the v2 dialect writes them as [\"number\", \"nan\"|\"+inf\"|\"-inf\"]", at: position)
        case let byte:
            throw error(.jsonSyntax, "unexpected \(describe(byte)) where a value was expected", at: position)
        }
    }

    private mutating func enterContainer() throws(FormatError) {
        depth += 1
        if depth > options.maximumDepth {
            throw error(.jsonTooDeep, "arrays and objects are nested more than \(options.maximumDepth) deep", at: position)
        }
    }

    private mutating func parseObject(pointer: JSONPointer) throws(FormatError) -> JSONValue {
        try enterContainer()
        position += 1
        var object = JSONObject()
        skipWhitespace()
        if try consumeIf(UInt8(ascii: "}")) {
            depth -= 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count else {
                throw error(.jsonUnexpectedEnd, "the file ends inside an object", at: position)
            }
            guard bytes[position] == UInt8(ascii: "\"") else {
                if bytes[position] == UInt8(ascii: "}") {
                    throw trailingComma()
                }
                throw error(.jsonSyntax, "unexpected \(describe(bytes[position])) where an object key was expected", at: position)
            }
            let keyOffset = position
            let key = try parseString()
            if object.contains(key) {
                var duplicate = error(.jsonDuplicateKey, "the key \"\(key)\" appears twice in the object at \(pointer.displayString)", at: keyOffset)
                duplicate.location.pointer = pointer
                throw duplicate
            }
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after an object key")
            let value = try parseValue(pointer: pointer / key)
            object[key] = value
            skipWhitespace()
            guard position < bytes.count else {
                throw error(.jsonUnexpectedEnd, "the file ends inside an object", at: position)
            }
            if try consumeIf(UInt8(ascii: ",")) {
                if options.allowsTrailingCommas {
                    skipWhitespace()
                    if try consumeIf(UInt8(ascii: "}")) { break }
                }
                continue
            }
            try expect(UInt8(ascii: "}"), "',' or '}' after an object member")
            break
        }
        depth -= 1
        return .object(object)
    }

    private mutating func parseArray(pointer: JSONPointer) throws(FormatError) -> JSONValue {
        try enterContainer()
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try consumeIf(UInt8(ascii: "]")) {
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if position < bytes.count && bytes[position] == UInt8(ascii: "]") && !elements.isEmpty {
                throw trailingComma()
            }
            elements.append(try parseValue(pointer: pointer / elements.count))
            skipWhitespace()
            guard position < bytes.count else {
                throw error(.jsonUnexpectedEnd, "the file ends inside an array", at: position)
            }
            if try consumeIf(UInt8(ascii: ",")) {
                if options.allowsTrailingCommas {
                    skipWhitespace()
                    if try consumeIf(UInt8(ascii: "]")) { break }
                }
                continue
            }
            try expect(UInt8(ascii: "]"), "',' or ']' after an array element")
            break
        }
        depth -= 1
        return .array(elements)
    }

    private func trailingComma() -> FormatError {
        error(
            .jsonTrailingComma,
            "a comma before '\(Character(Unicode.Scalar(bytes[position])))' is not allowed in strict JSON; the 1.x dialect's lenient mode (--lenient) accepts it",
            at: position)
    }

    private mutating func parseLiteral(_ literal: String) throws(FormatError) {
        let expected = Array(literal.utf8)
        for (i, byte) in expected.enumerated() {
            guard position + i < bytes.count else {
                throw error(.jsonUnexpectedEnd, "the file ends inside the literal '\(literal)'", at: bytes.count)
            }
            guard bytes[position + i] == byte else {
                throw error(.jsonSyntax, "invalid literal; expected '\(literal)'", at: position + i)
            }
        }
        position += expected.count
    }

    // MARK: - Numbers

    private mutating func parseNumber() throws(FormatError) -> JSONNumber {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else {
            throw error(.jsonUnexpectedEnd, "the file ends inside a number", at: position)
        }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) {
                throw error(.jsonSyntax, "numbers must not have leading zeros", at: start)
            }
        } else {
            try digits("a digit")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            try digits("a digit after the decimal point")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            try digits("a digit in the exponent")
        }
        if position - start > options.maximumNumberLength {
            throw error(.jsonTooLarge, "a number of \(position - start) characters exceeds the limit of \(options.maximumNumberLength)", at: start)
        }
        return JSONNumber(text: String(decoding: bytes[start..<position], as: UTF8.self))
    }

    private mutating func digits(_ what: String) throws(FormatError) {
        guard position < bytes.count else {
            throw error(.jsonUnexpectedEnd, "the file ends inside a number", at: position)
        }
        guard isDigit(bytes[position]) else {
            throw error(.jsonSyntax, "expected \(what), found \(describe(bytes[position]))", at: position)
        }
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    // MARK: - Strings

    private mutating func parseString() throws(FormatError) -> String {
        let start = position
        position += 1
        var output: [UInt8] = []
        var runStart = position
        while true {
            guard position < bytes.count else {
                throw error(.jsonUnexpectedEnd, "the file ends inside a string", at: position)
            }
            let byte = bytes[position]
            // The limit is on the decoded bytes (Spec/v2-json.md 3.2): the decoded text so far
            // plus the unescaped run being scanned, so escapes and the quotes are not counted.
            if output.count + (position - runStart) > options.maximumStringBytes {
                throw error(.jsonTooLarge, "a string longer than \(options.maximumStringBytes) bytes", at: start)
            }
            switch byte {
            case UInt8(ascii: "\""):
                output.append(contentsOf: bytes[runStart..<position])
                position += 1
                return String(decoding: output, as: UTF8.self)
            case UInt8(ascii: "\\"):
                output.append(contentsOf: bytes[runStart..<position])
                try parseEscape(into: &output)
                runStart = position
            case 0x00..<0x20:
                throw error(.jsonSyntax, "control character U+\(hex4(UInt16(byte))) must be escaped inside a string", at: position)
            case 0x20..<0x80:
                position += 1
            default:
                try skipUTF8Sequence()
            }
        }
    }

    private mutating func parseEscape(into output: inout [UInt8]) throws(FormatError) {
        let escapeStart = position
        position += 1
        guard position < bytes.count else {
            throw error(.jsonUnexpectedEnd, "the file ends inside an escape sequence", at: position)
        }
        let simple: UInt8?
        switch bytes[position] {
        case UInt8(ascii: "\""): simple = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): simple = UInt8(ascii: "\\")
        case UInt8(ascii: "/"): simple = UInt8(ascii: "/")
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"): simple = nil
        default:
            throw error(.jsonSyntax, "invalid escape sequence '\\\(Character(Unicode.Scalar(bytes[position])))'", at: escapeStart)
        }
        if let simple {
            output.append(simple)
            position += 1
            return
        }
        position += 1
        let first = try hexQuad()
        var scalarValue = UInt32(first)
        if (0xD800..<0xDC00).contains(first) {
            // The input ending here is still the start of a valid text (a low surrogate may follow):
            // unexpected end, not a lone surrogate (Spec/v2-json.md 3.3).
            if position == bytes.count || (position + 1 == bytes.count && bytes[position] == UInt8(ascii: "\\")) {
                throw error(.jsonUnexpectedEnd, "the file ends after the high surrogate escape \\u\(hex4(first))", at: bytes.count)
            }
            guard bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                throw error(.jsonSyntax, "a high surrogate escape \\u\(hex4(first)) is not followed by a low surrogate", at: escapeStart)
            }
            position += 2
            let second = try hexQuad()
            guard (0xDC00..<0xE000).contains(second) else {
                throw error(.jsonSyntax, "a high surrogate escape \\u\(hex4(first)) is not followed by a low surrogate", at: escapeStart)
            }
            scalarValue = 0x10000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
        } else if (0xDC00..<0xE000).contains(first) {
            throw error(.jsonSyntax, "a lone low surrogate escape \\u\(hex4(first))", at: escapeStart)
        }
        guard let scalar = Unicode.Scalar(scalarValue) else {
            throw error(.jsonSyntax, "invalid Unicode escape", at: escapeStart)
        }
        output.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    private mutating func hexQuad() throws(FormatError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard position < bytes.count else {
                throw error(.jsonUnexpectedEnd, "the file ends inside a \\u escape", at: position)
            }
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(.jsonSyntax, "expected a hexadecimal digit in a \\u escape, found \(describe(byte))", at: position)
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    /// Checks one multi-byte UTF-8 sequence (RFC 3629: no overlong forms, no surrogates,
    /// nothing above U+10FFFF) and moves past it.
    private mutating func skipUTF8Sequence() throws(FormatError) {
        let lead = bytes[position]
        let length: Int
        var lowerBound: UInt8 = 0x80, upperBound: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lowerBound = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upperBound = 0x9F
        case 0xF0: length = 4; lowerBound = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upperBound = 0x8F
        default:
            throw error(.jsonInvalidUTF8, "byte 0x\(hex2(lead)) cannot start a UTF-8 character", at: position)
        }
        for i in 1..<length {
            guard position + i < bytes.count else {
                throw error(.jsonUnexpectedEnd, "the file ends inside a UTF-8 character", at: bytes.count)
            }
            let byte = bytes[position + i]
            let low = i == 1 ? lowerBound : 0x80, high = i == 1 ? upperBound : 0xBF
            guard byte >= low && byte <= high else {
                throw error(.jsonInvalidUTF8, "byte 0x\(hex2(byte)) is not a valid continuation of a UTF-8 character", at: position + i)
            }
        }
        position += length
    }

    // MARK: - Helpers

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func consumeIf(_ byte: UInt8) throws(FormatError) -> Bool {
        if position < bytes.count && bytes[position] == byte {
            position += 1
            return true
        }
        return false
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(FormatError) {
        guard position < bytes.count else {
            throw error(.jsonUnexpectedEnd, "the file ends where \(what) was expected", at: position)
        }
        guard bytes[position] == byte else {
            throw error(.jsonSyntax, "expected \(what), found \(describe(bytes[position]))", at: position)
        }
        position += 1
    }

    private func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(hex2(byte))"
    }

    private func error(_ code: FormatError.Code, _ message: String, at offset: Int) -> FormatError {
        FormatError(code, message, location: .init(offset: offset, in: bytes))
    }
}

private let hexDigitCharacters = Array("0123456789ABCDEF")

private func hex2(_ byte: UInt8) -> String {
    String([hexDigitCharacters[Int(byte >> 4)], hexDigitCharacters[Int(byte & 0xF)]])
}

private func hex4(_ value: UInt16) -> String { hex2(UInt8(value >> 8)) + hex2(UInt8(value & 0xFF)) }
