import Foundation
import JSONDocument
import EnsembleModel

/// The tagged pairs `["<tag>", <payload>]` both JSON dialects use for values JSON cannot carry
/// (Spec/v2-json.md section 5.5).
enum TaggedValue {
    /// Errors point at the whole value (Spec/v2-json.md section 9), not at the pair's elements.
    static func decode(tag: String, payload: JSONValue, at pointer: JSONPointer) throws(FormatError) -> AttributeValue {
        func text() throws(FormatError) -> String {
            guard case .string(let text) = payload else {
                throw FormatError(.v2InvalidValue, "the \"\(tag)\" tag takes a string, found \(payload.typeName)", at: pointer)
            }
            return text
        }
        switch tag {
        case V2ValueTag.decimal:
            let decimal = try text()
            guard isDecimalText(decimal) else {
                throw FormatError(.v2InvalidDecimal, "\"\(decimal)\" is not decimal text", at: pointer)
            }
            return .decimal(decimal)
        case V2ValueTag.date:
            guard case .number(let number) = payload else {
                throw FormatError(.v2InvalidValue, "a date is a number of milliseconds since 1970, found \(payload.typeName)", at: pointer)
            }
            let milliseconds = number.doubleValue
            guard milliseconds.isFinite else {
                throw FormatError(.v2NumberOutOfRange, "date \(number.text) is beyond the range of a double", at: pointer)
            }
            return .date(millisecondsSince1970: milliseconds)
        case V2ValueTag.data:
            let base64 = try text()
            guard let data = Data(base64Encoded: base64), data.base64EncodedString() == base64 else {
                throw FormatError(
                    .v2InvalidBase64, "the data value is not canonical base64 (standard alphabet, '=' padding, no line breaks, unused bits zero)", at: pointer)
            }
            return .binary(data)
        case V2ValueTag.number:
            switch try text() {
            case "nan": return .double(.nan)
            case "+inf": return .double(.infinity)
            case "-inf": return .double(-.infinity)
            case let other:
                throw FormatError(.v2InvalidValue, "\"\(other)\" is not one of \"nan\", \"+inf\", \"-inf\"", at: pointer)
            }
        case V2ValueTag.uuid:
            let uuidText = try text()
            guard uuidText.utf8.count == 36, let uuid = UUID(uuidString: uuidText) else {
                throw FormatError(.v2InvalidUUID, "\"\(uuidText)\" is not a UUID in 8-4-4-4-12 hexadecimal form", at: pointer)
            }
            return .uuid(uuid)
        case V2ValueTag.url:
            return .url(try text())
        default:
            throw FormatError(.v2UnknownValueTag, "unknown value tag \"\(tag)\"", at: pointer)
        }
    }
}
