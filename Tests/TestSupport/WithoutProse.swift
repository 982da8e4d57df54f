import JSONDocument

/// A document without its informative text (`reason`, `consequence`, `message`), which
/// conformance comparisons leave out.
public func withoutProse(_ value: JSONValue) -> JSONValue {
    switch value {
    case .array(let elements): return .array(elements.map(withoutProse))
    case .object(let object):
        return .object(
            JSONObject(
                object.members.filter { !["reason", "consequence", "message"].contains($0.key) }
                    .map { ($0.key, withoutProse($0.value)) }))
    default: return value
    }
}
