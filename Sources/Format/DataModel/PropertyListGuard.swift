import Foundation
import JSONDocument

/// Reads property lists from untrusted bytes (a store's metadata, a compiled model's
/// `VersionInfo.plist`, an event's `modelVersion`): bounded in size, in nesting, and never
/// handed to Foundation in a shape that makes it expand without bound (Spec/model.md 8.5).
package enum PropertyListGuard {
    /// Nesting of arrays and dictionaries, as for binary property lists.
    package static let maximumDepth = BinaryPropertyListShape.maximumDepth

    /// Why `bytes` must not be given to `PropertyListSerialization`, or nil when they may.
    ///
    /// Binary lists go through ``BinaryPropertyListShape``. XML lists are scanned for their
    /// nesting and refused when they declare entities (an internal DTD subset), so that no
    /// parser ever expands one; comments, CDATA and processing instructions are skipped so that
    /// they cannot hide a tag from the count.
    package static func problem(_ bytes: [UInt8], limit: Int) -> String? {
        guard bytes.count <= limit else { return "a property list larger than \(limit) bytes" }
        if bytes.starts(with: BinaryPropertyListShape.magic) { return BinaryPropertyListShape.problem(bytes) }
        var depth = 0
        var index = 0
        func starts(_ text: String, at position: Int) -> Bool {
            let pattern = Array(text.utf8)
            return position + pattern.count <= bytes.count && Array(bytes[position..<(position + pattern.count)]) == pattern
        }
        func skip(past terminator: String, from position: Int) -> Int? {
            let pattern = Array(terminator.utf8)
            var cursor = position
            while cursor + pattern.count <= bytes.count {
                if bytes[cursor] == pattern[0] && starts(terminator, at: cursor) { return cursor + pattern.count }
                cursor += 1
            }
            return nil
        }
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            if starts("<!--", at: index) {
                guard let next = skip(past: "-->", from: index + 4) else { return "a property list with an unterminated comment" }
                index = next
            } else if starts("<![CDATA[", at: index) {
                guard let next = skip(past: "]]>", from: index + 9) else { return "a property list with an unterminated CDATA section" }
                index = next
            } else if starts("<?", at: index) {
                guard let next = skip(past: "?>", from: index + 2) else { return "a property list with an unterminated processing instruction" }
                index = next
            } else if starts("<!", at: index) {
                // <!DOCTYPE ...>: refused when it has an internal subset, which is where entities live.
                guard let next = skip(past: ">", from: index + 2) else { return "a property list with an unterminated declaration" }
                if bytes[index..<next].contains(UInt8(ascii: "[")) { return "a property list that declares entities" }
                index = next
            } else {
                guard let next = skip(past: ">", from: index + 1) else { return "a property list with an unterminated tag" }
                let tag = bytes[(index + 1)..<(next - 1)]
                let selfClosing = tag.last == UInt8(ascii: "/")
                let closing = tag.first == UInt8(ascii: "/")
                let name = String(decoding: tag.drop { $0 == UInt8(ascii: "/") }.prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "/") }, as: UTF8.self)
                if name == "array" || name == "dict" {
                    if closing {
                        depth -= 1
                    } else if !selfClosing {
                        depth += 1
                        if depth > maximumDepth { return "a property list nested deeper than \(maximumDepth)" }
                    }
                }
                index = next
            }
        }
        return nil
    }

    /// Parses guarded bytes; `what` names the source in the error.
    package static func read(_ bytes: [UInt8], limit: Int, code: FormatError.Code, location: FormatError.Location) throws(FormatError) -> Any {
        if let problem = problem(bytes, limit: limit) { throw FormatError(code, problem, location: location) }
        do {
            return try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        } catch {
            throw FormatError(code, "not a property list: \(error.localizedDescription)", location: location)
        }
    }
}
