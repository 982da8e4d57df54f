import Foundation
import JSONDocument

/// A bounded reader of XML property lists, written by hand rather than handed to Foundation:
/// swift-corelibs-foundation leaks the error it builds for every malformed list (found by
/// fuzzing), and gives `CF$UID` references back as an internal class (Spec/device-state.md 3.1).
/// It reads the elements of Apple's property-list DTD, expands only the five predefined entities
/// and character references, and refuses a document type declaration with an internal subset.
struct XMLPropertyList {
    private let bytes: [UInt8]
    private let maximumDepth: Int
    private var position = 0

    init(_ bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private struct Tag {
        var name: String
        var closing: Bool
        var empty: Bool
        var offset: Int
    }

    private func failure(_ message: String, at offset: Int? = nil) -> FormatError {
        FormatError(.archiveNotPropertyList, message, location: .init(offset: offset ?? position))
    }

    private func starts(_ text: String, at offset: Int) -> Bool {
        let pattern = Array(text.utf8)
        return offset + pattern.count <= bytes.count && bytes[offset..<(offset + pattern.count)].elementsEqual(pattern)
    }

    /// Moves past `terminator`, or fails.
    private mutating func skip(past terminator: String, what: String) throws(FormatError) {
        let start = position
        while position < bytes.count {
            if starts(terminator, at: position) {
                position += terminator.utf8.count
                return
            }
            position += 1
        }
        throw failure("an unterminated \(what)", at: start)
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    mutating func read() throws(FormatError) -> PropertyListValue {
        if starts("\u{FEFF}", at: 0) { position = 3 }
        let first = try nextTag()
        if first.name == "plist" && !first.closing {
            if first.empty { throw failure("an empty plist element", at: first.offset) }
            let value = try value(try nextTag(), depth: 1)
            let end = try nextTag()
            guard end.closing, end.name == "plist" else { throw failure("content after the value of the plist element", at: end.offset) }
            try trailing()
            return value
        }
        let value = try value(first, depth: 1)
        try trailing()
        return value
    }

    /// Only white space and comments may follow the document.
    private mutating func trailing() throws(FormatError) {
        while position < bytes.count {
            if Self.isSpace(bytes[position]) {
                position += 1
            } else if starts("<!--", at: position) {
                try skip(past: "-->", what: "comment")
            } else {
                throw failure("content after the property list")
            }
        }
    }

    /// The next tag, past white space, comments, processing instructions and a document type
    /// declaration; text here is an error.
    private mutating func nextTag() throws(FormatError) -> Tag {
        while true {
            while position < bytes.count && Self.isSpace(bytes[position]) { position += 1 }
            guard position < bytes.count else { throw failure("the property list ends early") }
            guard bytes[position] == UInt8(ascii: "<") else { throw failure("text where an element is expected") }
            if starts("<!--", at: position) {
                try skip(past: "-->", what: "comment")
            } else if starts("<?", at: position) {
                try skip(past: "?>", what: "processing instruction")
            } else if starts("<!DOCTYPE", at: position) {
                let start = position
                try skip(past: ">", what: "document type declaration")
                if bytes[start..<position].contains(UInt8(ascii: "[")) { throw failure("a document type declaration with entities", at: start) }
            } else {
                return try tag()
            }
        }
    }

    /// The tag at `position` (which is `<`): its name and whether it closes or is empty.
    private mutating func tag() throws(FormatError) -> Tag {
        let offset = position
        position += 1
        let closing = position < bytes.count && bytes[position] == UInt8(ascii: "/")
        if closing { position += 1 }
        let nameStart = position
        while position < bytes.count, bytes[position] != UInt8(ascii: ">"), bytes[position] != UInt8(ascii: "/"), !Self.isSpace(bytes[position]) {
            position += 1
        }
        let name = String(decoding: bytes[nameStart..<position], as: UTF8.self)
        // Attributes (plist's `version`) are skipped; a `>` inside a quoted value is not an end.
        var quote: UInt8?
        var empty = false
        while position < bytes.count {
            let byte = bytes[position]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                empty = position > offset && bytes[position - 1] == UInt8(ascii: "/")
                position += 1
                guard !name.isEmpty, !(closing && empty) else { throw failure("a malformed tag", at: offset) }
                return Tag(name: name, closing: closing, empty: empty, offset: offset)
            }
            position += 1
        }
        throw failure("an unterminated tag", at: offset)
    }

    /// The text of an element up to its end tag, with entities and character references expanded.
    private mutating func text(of open: Tag) throws(FormatError) -> String {
        if open.empty { return "" }
        var output: [UInt8] = []
        while true {
            guard position < bytes.count else { throw failure("the element \(open.name) is not closed", at: open.offset) }
            let byte = bytes[position]
            if byte == UInt8(ascii: "<") {
                if starts("<!--", at: position) {
                    try skip(past: "-->", what: "comment")
                } else if starts("<![CDATA[", at: position) {
                    let start = position + 9
                    try skip(past: "]]>", what: "CDATA section")
                    output += bytes[start..<(position - 3)]
                } else {
                    let end = try tag()
                    guard end.closing, end.name == open.name else { throw failure("an element inside \(open.name)", at: end.offset) }
                    break
                }
            } else if byte == UInt8(ascii: "&") {
                output += try reference()
            } else {
                output.append(byte)
                position += 1
            }
        }
        guard let text = String(bytes: output, encoding: .utf8) else { throw failure("text that is not UTF-8", at: open.offset) }
        return text
    }

    /// An entity or character reference at `position`, as UTF-8.
    private mutating func reference() throws(FormatError) -> [UInt8] {
        let start = position
        guard let end = bytes[position...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else { throw failure("a malformed reference", at: start) }
        let name = String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
        position = end + 1
        switch name {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default:
            var digits = Substring(name)
            var radix = 10
            guard digits.first == "#" else { throw failure("an entity other than the five of XML", at: start) }
            digits = digits.dropFirst()
            if digits.first == "x" {
                radix = 16
                digits = digits.dropFirst()
            }
            guard let value = UInt32(digits, radix: radix), let scalar = Unicode.Scalar(value), value != 0 else {
                throw failure("a character reference to no character", at: start)
            }
            return Array(String(Character(scalar)).utf8)
        }
    }

    private mutating func value(_ open: Tag, depth: Int) throws(FormatError) -> PropertyListValue {
        guard !open.closing else { throw failure("an end tag where a value is expected", at: open.offset) }
        switch open.name {
        case "dict":
            guard depth <= maximumDepth else {
                throw FormatError(.archiveTooDeep, "a property list nested deeper than \(maximumDepth)", location: .init(offset: open.offset))
            }
            var values: [ExactString: PropertyListValue] = [:]
            if !open.empty {
                while true {
                    let next = try nextTag()
                    if next.closing && next.name == "dict" { break }
                    guard next.name == "key", !next.closing else { throw failure("a dictionary entry without a key", at: next.offset) }
                    let key = try text(of: next)
                    guard values[ExactString(key)] == nil else { throw failure("a dictionary with the key \"\(key)\" twice", at: next.offset) }
                    values[ExactString(key)] = try value(try nextTag(), depth: depth + 1)
                }
            }
            // `<dict><key>CF$UID</key><integer>n</integer></dict>` is a UID, as in Apple's readers.
            if values.count == 1, case .integer(let number)? = values["CF$UID"], number >= 0 { return .uid(UInt64(number)) }
            return .dictionary(values)
        case "array":
            guard depth <= maximumDepth else {
                throw FormatError(.archiveTooDeep, "a property list nested deeper than \(maximumDepth)", location: .init(offset: open.offset))
            }
            var values: [PropertyListValue] = []
            if !open.empty {
                while true {
                    let next = try nextTag()
                    if next.closing && next.name == "array" { break }
                    values.append(try value(next, depth: depth + 1))
                }
            }
            return .array(values)
        case "string":
            return .string(try text(of: open))
        case "true", "false":
            guard try text(of: open).isEmpty else { throw failure("a boolean with content", at: open.offset) }
            return .bool(open.name == "true")
        case "integer":
            let text = try text(of: open).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let number = Int64(text.hasPrefix("+") ? String(text.dropFirst()) : text) else {
                throw failure("an integer that is not a 64-bit signed decimal number", at: open.offset)
            }
            return .integer(number)
        case "real":
            let text = try text(of: open).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let number = Double(text) else { throw failure("a real that is not a number", at: open.offset) }
            return .real(number)
        case "data":
            let text = try text(of: open).filter { !$0.isWhitespace }
            guard let data = Data(base64Encoded: text) else { throw failure("data that is not base64", at: open.offset) }
            return .data([UInt8](data))
        case "date":
            guard let seconds = Self.date(try text(of: open)) else { throw failure("a date not of the form YYYY-MM-DDTHH:MM:SSZ", at: open.offset) }
            return .date(seconds)
        default:
            throw failure("an element <\(open.name)> that property lists do not have", at: open.offset)
        }
    }

    /// Seconds from 2001-01-01T00:00:00Z of `YYYY-MM-DDTHH:MM:SSZ` (UTC, the form Apple writes).
    static func date(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 60
        else { return nil }
        // Days from the civil date (proleptic Gregorian), counted from 1970-01-01.
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let unix = Double(days * 86_400 + hour * 3_600 + minute * 60 + second)
        return unix - 978_307_200
    }
}
