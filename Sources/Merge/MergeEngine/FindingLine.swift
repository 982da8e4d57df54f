import JSONDocument
import EnsembleModel

/// The one-line form of a finding or read error on standard error (Spec/merge.md 5.9):
/// `code [(number)] [files] [[name=value, ...]]: message`, with fields quoted as JSON strings
/// whenever they could be confused with the separators or hold control characters, and the
/// message escaped as all text output is (Spec/README.md 4.1). The conformance runner parses
/// what the merge writes with the same type.
package enum FindingLine {
    /// The line for `problem`, without its final LF.
    package static func render(_ problem: IntegrityProblem) -> String {
        var line = problem.code.rawValue
        if let number = problem.number { line += " (\(number))" }
        if !problem.files.isEmpty { line += " " + problem.files.map(field).joined(separator: ", ") }
        if !problem.details.isEmpty {
            line += " [" + problem.details.map { "\($0.key)=\(field(text(of: $0.value)))" }.joined(separator: ", ") + "]"
        }
        return line + ": " + TerminalText.escape(problem.message)
    }

    /// A parsed line: what conformance compares. Nil when `line` does not follow the grammar.
    package static func parse(_ line: String) -> (code: String, number: Int?, files: [String], details: [(name: String, value: String)])? {
        var rest = Substring(line)
        guard let space = rest.firstIndex(where: { $0 == " " || $0 == ":" }) else { return nil }
        let code = String(rest[..<space])
        // A code is dotted lowercase words (`merge.revision-gap`, `json.syntax`), README section 6.
        let parts = code.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" } }) else {
            return nil
        }
        rest = rest[space...]
        var number: Int?
        if rest.hasPrefix(" ("), let close = rest.firstIndex(of: ")") {
            let digits = rest[rest.index(rest.startIndex, offsetBy: 2)..<close]
            if let value = Int(digits), !digits.isEmpty, digits.allSatisfy(\.isASCII) {
                number = value
                rest = rest[rest.index(after: close)...]
            }
        }
        var files: [String] = []
        var details: [(name: String, value: String)] = []
        if rest.hasPrefix(" "), !rest.hasPrefix(" [") {
            rest = rest.dropFirst()
            while true {
                guard let (value, after) = readField(rest, stops: [",", ":", "["]) else { return nil }
                files.append(value)
                rest = after
                if rest.hasPrefix(", ") { rest = rest.dropFirst(2) } else { break }
            }
        }
        if rest.hasPrefix(" [") {
            rest = rest.dropFirst(2)
            while true {
                guard let equals = rest.firstIndex(of: "=") else { return nil }
                let name = String(rest[..<equals])
                guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber }) else { return nil }
                guard let (value, after) = readField(rest[rest.index(after: equals)...], stops: [",", "]"]) else { return nil }
                details.append((name, value))
                rest = after
                if rest.hasPrefix(", ") { rest = rest.dropFirst(2) } else { break }
            }
            guard rest.hasPrefix("]") else { return nil }
            rest = rest.dropFirst()
        }
        guard rest.hasPrefix(": ") || rest == ":" else { return nil }
        return (code, number, files, details)
    }

    /// A detail value as text: strings as they are, numbers as their decimal text.
    package static func text(of value: JSONValue) -> String {
        switch value {
        case .string(let string): return string
        default: return JSONWriter().string(value)
        }
    }

    /// `value` bare when no reader could misread it, else quoted.
    static func field(_ value: String) -> String {
        let scalars = value.unicodeScalars
        let bare =
            !value.isEmpty && !value.hasPrefix(" ") && !value.hasSuffix(" ") && !value.hasPrefix("(")
            && !scalars.contains { needsQuoting($0) || "\"\\,:[]=".unicodeScalars.contains($0) }
        return bare ? value : quoted(value)
    }

    private static func needsQuoting(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }

    private static func quoted(_ value: String) -> String {
        "\"" + escape(value) + "\""
    }

    private static func escape(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\u{08}": result += "\\b"
            case "\t": result += "\\t"
            case "\n": result += "\\n"
            case "\u{0C}": result += "\\f"
            case "\r": result += "\\r"
            case _ where needsQuoting(scalar):
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// One field at the start of `text`: a quoted JSON string, or bare text up to the first
    /// of `stops` (less the space before it). Returns the value and what follows it.
    private static func readField(_ text: Substring, stops: Set<Character>) -> (String, Substring)? {
        if text.hasPrefix("\"") {
            var index = text.index(after: text.startIndex)
            while index < text.endIndex, text[index] != "\"" {
                if text[index] == "\\" { index = text.index(after: index) }
                guard index < text.endIndex else { return nil }
                index = text.index(after: index)
            }
            guard index < text.endIndex else { return nil }
            let end = text.index(after: index)
            guard case .string(let value)? = try? JSONParser.parse(Array(text[..<end].utf8)) else { return nil }
            return (value, text[end...])
        }
        var end = text.firstIndex { stops.contains($0) } ?? text.endIndex
        if end < text.endIndex, text[end] == "[" || text[end] == ":" {
            // Those stops follow a space (" [", ": "), which is not part of the field.
            guard end > text.startIndex else { return nil }
            if text[end] == "[" {
                guard text[text.index(before: end)] == " " else { return nil }
                end = text.index(before: end)
            }
        }
        let value = text[..<end]
        guard !value.isEmpty, !value.hasSuffix(" ") else { return nil }
        return (String(value), text[end...])
    }
}

extension IntegrityProblem {
    /// A read error as merge reports it (Spec/merge.md 5.9, "Read errors"): no number; the
    /// byte offset, else the JSON pointer, as its detail.
    public init(readError error: FormatError) {
        var details = JSONObject()
        if let offset = error.location.offset {
            details = JSONObject([("offset", JSONValue(Int64(offset)))])
        } else if let pointer = error.location.pointer {
            details = JSONObject([("pointer", .string(pointer.description))])
        }
        var message = error.message
        if let line = error.location.line, let column = error.location.column { message = "line \(line), column \(column): " + message }
        self.init(code: error.code, number: nil, files: error.location.file.map { [$0] } ?? [], message: message, details: details)
    }

    /// The report order (Spec/merge.md 5.9): code, then files element by element, then details
    /// in order (integers by value, strings by UTF-8 bytes).
    public static func reportPrecedes(_ a: IntegrityProblem, _ b: IntegrityProblem) -> Bool {
        if a.code != b.code { return utf8Precedes(a.code.rawValue, b.code.rawValue) }
        if !exactlyEqual(a.files, b.files) { return a.files.lexicographicallyPrecedes(b.files, by: utf8Precedes) }
        for (x, y) in zip(a.details.members.map(\.value), b.details.members.map(\.value)) where x != y {
            if let m = x.numberValue?.int64Value, let n = y.numberValue?.int64Value { return m < n }
            return utf8Precedes(FindingLine.text(of: x), FindingLine.text(of: y))
        }
        return a.details.count < b.details.count
    }
}
