/// `Codable` for JSON values, so that typed results can carry the parts of a document that are
/// JSON by nature (attribute values, property maps) and still encode to the published schemas.
///
/// A number encodes as an integer when its text is an int64 literal, otherwise as a double: a
/// `Codable` encoder has no way to write number text as it stands. The documents the toolkit
/// writes itself keep their exact text (``JSONWriter``).
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        if let keyed = try? decoder.container(keyedBy: MemberKey.self) {
            var members: [(String, JSONValue)] = []
            for key in keyed.allKeys { members.append((key.stringValue, try keyed.decode(JSONValue.self, forKey: key))) }
            self = .object(JSONObject(members))
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let flag = try? single.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? single.decode(Int64.self) {
            self = JSONValue(integer)
        } else if let double = try? single.decode(Double.self) {
            guard double.isFinite else {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "a JSON number must be finite")
            }
            self = JSONValue(double)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let flag):
            var single = encoder.singleValueContainer()
            try single.encode(flag)
        case .number(let number):
            var single = encoder.singleValueContainer()
            if let integer = number.int64Value {
                try single.encode(integer)
            } else if let double = Double(number.text), double.isFinite {
                try single.encode(double)
            } else {
                throw EncodingError.invalidValue(
                    number, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "\(number.text) is not a finite double"))
            }
        case .string(let string):
            var single = encoder.singleValueContainer()
            try single.encode(string)
        case .array(let elements):
            var array = encoder.unkeyedContainer()
            for element in elements { try array.encode(element) }
        case .object(let object):
            try object.encode(to: encoder)
        }
    }
}

extension JSONObject: Codable {
    public init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSONValue(from: decoder) else {
            throw DecodingError.typeMismatch(
                JSONObject.self, DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "expected a JSON object"))
        }
        self = object
    }

    public func encode(to encoder: any Encoder) throws {
        var keyed = encoder.container(keyedBy: MemberKey.self)
        for (key, value) in members { try keyed.encode(value, forKey: MemberKey(key)) }
    }
}

/// Any member name of a JSON object as a coding key.
struct MemberKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
