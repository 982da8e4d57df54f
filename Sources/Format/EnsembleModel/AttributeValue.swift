import JSONDocument
import Foundation

/// A typed attribute value (Spec/README.md section 3, Spec/v2-json.md section 5). Transformable attributes are `binary`: the data
/// model, not the value, says which it is.
public enum AttributeValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// Any double, including NaN and the infinities. All NaNs are one value.
    case double(Double)
    /// Exact decimal text as written (`-12.50`, `1e-3`): never converted to binary floating point.
    case decimal(String)
    case string(String)
    /// Milliseconds since 1970-01-01T00:00:00Z (the v2 JSON `date` tag's unit); may be negative.
    case date(millisecondsSince1970: Double)
    case binary(Data)
    case uuid(UUID)
    /// A URI kept as its text.
    case url(String)

    public static func == (lhs: AttributeValue, rhs: AttributeValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.integer(a), .integer(b)): a == b
        // By bit pattern (0.0 and -0.0 differ, as they do in every encoding); all NaNs are one.
        case let (.double(a), .double(b)): a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
        case let (.decimal(a), .decimal(b)): a == b
        case let (.string(a), .string(b)): ExactString(a) == ExactString(b)
        case let (.date(a), .date(b)): a == b
        case let (.binary(a), .binary(b)): a == b
        case let (.uuid(a), .uuid(b)): a == b
        case let (.url(a), .url(b)): ExactString(a) == ExactString(b)
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let v): hasher.combine(1); hasher.combine(v)
        case .integer(let v): hasher.combine(2); hasher.combine(v)
        case .double(let v): hasher.combine(3); hasher.combine(v.isNaN ? Double.nan.bitPattern : v.bitPattern)
        case .decimal(let v): hasher.combine(4); hasher.combine(v)
        case .string(let v): hasher.combine(5); hasher.combine(ExactString(v))
        case .date(let v): hasher.combine(6); hasher.combine(v)
        case .binary(let v): hasher.combine(7); hasher.combine(v)
        case .uuid(let v): hasher.combine(8); hasher.combine(v)
        case .url(let v): hasher.combine(9); hasher.combine(ExactString(v))
        }
    }
}
