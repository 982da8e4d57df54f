import JSONDocument

extension FormatError.Code {
    /// The schema itself uses a keyword this validator does not implement, or is malformed.
    public static let schemaUnsupported = Self("schema.unsupported")

    /// A violation of JSON Schema keyword `keyword`: `schema.required`, `schema.type`, ...
    public static func schema(_ keyword: String) -> Self { Self("schema." + keyword) }
}

/// Validates JSON instances against a JSON Schema (draft 2020-12), implementing exactly the
/// keywords the Spec's schemas use.
///
/// Written by hand because no maintained Swift JSON Schema validator is available to the
/// package; a schema that uses any other keyword is refused when loaded, so the Spec cannot
/// silently rely on a rule this validator would skip. CI runs Python's `jsonschema` on every
/// fixture and fails if the two disagree.
public struct SchemaValidator: Sendable {
    public static let supportedKeywords: Set<String> = [
        "$schema", "$id", "$defs", "$ref", "$comment", "title", "description",
        "type", "enum", "const",
        "properties", "required", "additionalProperties", "patternProperties", "propertyNames",
        "minProperties", "maxProperties", "dependentRequired",
        "items", "prefixItems", "minItems", "maxItems", "uniqueItems",
        "minLength", "maxLength", "pattern", "minimum", "maximum",
        "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    ]

    private let root: JSONValue
    private let patterns: [String: CompiledPattern]

    /// Loads a schema, refusing unknown keywords, unresolvable `$ref`s and invalid patterns.
    public init(schema: JSONValue) throws(FormatError) {
        root = schema
        var collected: [String: CompiledPattern] = [:]
        try Self.check(schema, at: .root, root: schema, patterns: &collected)
        patterns = collected
    }

    /// Every violation, one per (code, pointer), sorted by pointer then code (Spec/v2-json.md
    /// section 4). Empty means valid.
    public func validate(_ instance: JSONValue) -> [FormatError] {
        var errors: [FormatError] = []
        evaluate(root, instance, at: .root, errors: &errors)
        var seen = Set<String>()
        return errors.sorted { ($0.location.pointer ?? .root, $0.code) < ($1.location.pointer ?? .root, $1.code) }
            .filter { seen.insert("\($0.code) \($0.location.pointer ?? .root)").inserted }
    }

    public func isValid(_ instance: JSONValue) -> Bool {
        var errors: [FormatError] = []
        evaluate(root, instance, at: .root, errors: &errors)
        return errors.isEmpty
    }

    // MARK: - Loading

    private static func check(_ schema: JSONValue, at path: JSONPointer, root: JSONValue,
                              patterns: inout [String: CompiledPattern]) throws(FormatError) {
        if case .bool = schema { return }
        guard case .object(let object) = schema else {
            throw FormatError(.schemaUnsupported, "a schema must be an object or a boolean", at: path)
        }
        for (keyword, value) in object {
            let here = path / keyword
            guard supportedKeywords.contains(keyword) else {
                throw FormatError(.schemaUnsupported, "the keyword \"\(keyword)\" is not implemented by this validator", at: here)
            }
            switch keyword {
            case "properties", "patternProperties", "$defs":
                guard case .object(let members) = value else {
                    throw FormatError(.schemaUnsupported, "\"\(keyword)\" must be an object", at: here)
                }
                for (name, subschema) in members {
                    if keyword == "patternProperties" { try compile(name, at: here / name, into: &patterns) }
                    try check(subschema, at: here / name, root: root, patterns: &patterns)
                }
            case "allOf", "anyOf", "oneOf", "prefixItems":
                guard case .array(let list) = value, !list.isEmpty else {
                    throw FormatError(.schemaUnsupported, "\"\(keyword)\" must be a non-empty array", at: here)
                }
                for (i, subschema) in list.enumerated() { try check(subschema, at: here / i, root: root, patterns: &patterns) }
            case "additionalProperties", "propertyNames", "items", "not", "if", "then", "else":
                try check(value, at: here, root: root, patterns: &patterns)
            case "pattern":
                guard case .string(let pattern) = value else {
                    throw FormatError(.schemaUnsupported, "\"pattern\" must be a string", at: here)
                }
                try compile(pattern, at: here, into: &patterns)
            case "$ref":
                guard case .string(let reference) = value, resolve(reference, in: root) != nil else {
                    throw FormatError(.schemaUnsupported, "\"$ref\" must be a local reference of the form \"#/$defs/NAME\" that exists", at: here)
                }
            default:
                break
            }
        }
    }

    private static func compile(_ pattern: String, at path: JSONPointer, into patterns: inout [String: CompiledPattern]) throws(FormatError) {
        guard patterns[pattern] == nil else { return }
        do {
            // Code points, not grapheme clusters: JSON Schema patterns are ECMA-262 regexes.
            patterns[pattern] = CompiledPattern(regex: try Regex(pattern).matchingSemantics(.unicodeScalar))
        } catch {
            throw FormatError(.schemaUnsupported, "the pattern \"\(pattern)\" does not compile: \(error)", at: path)
        }
    }

    private static func resolve(_ reference: String, in root: JSONValue) -> JSONValue? {
        guard reference.hasPrefix("#"), let pointer = JSONPointer(parsing: String(reference.dropFirst())),
              pointer.tokens.first == "$defs" else { return nil }
        return root[pointer]
    }

    // MARK: - Evaluation

    private func evaluate(_ schema: JSONValue, _ instance: JSONValue, at pointer: JSONPointer, errors: inout [FormatError]) {
        guard case .object(let keywords) = schema else {
            if schema == .bool(false) {
                errors.append(FormatError(.schema("false"), "no value is allowed here", at: pointer))
            }
            return
        }
        func fail(_ keyword: String, _ message: String, at location: JSONPointer = pointer) {
            errors.append(FormatError(.schema(keyword), message, at: location))
        }
        if case .string(let reference)? = keywords["$ref"], let target = Self.resolve(reference, in: root) {
            evaluate(target, instance, at: pointer, errors: &errors)
        }
        if let type = keywords["type"] {
            let allowed = type.stringValue.map { [$0] } ?? type.arrayValue?.compactMap(\.stringValue) ?? []
            if !allowed.contains(where: { Self.hasType(instance, $0) }) {
                fail("type", "expected \(allowed.joined(separator: " or ")), found \(instance.typeName)")
            }
        }
        if let options = keywords["enum"]?.arrayValue, !options.contains(where: { Self.equal($0, instance) }) {
            fail("enum", "the value is not one of the allowed values \(JSONWriter().string(.array(options)))")
        }
        if let constant = keywords["const"], !Self.equal(constant, instance) {
            fail("const", "the value must be \(JSONWriter().string(constant))")
        }
        switch instance {
        case .object(let object): evaluateObject(keywords, object, at: pointer, errors: &errors)
        case .array(let array): evaluateArray(keywords, array, at: pointer, errors: &errors)
        case .string(let string): evaluateString(keywords, string, at: pointer, errors: &errors)
        case .number(let number):
            if let minimum = keywords["minimum"]?.numberValue, number.compare(minimum) == .less {
                fail("minimum", "\(number.text) is less than the minimum \(minimum.text)")
            }
            if let maximum = keywords["maximum"]?.numberValue, number.compare(maximum) == .greater {
                fail("maximum", "\(number.text) is greater than the maximum \(maximum.text)")
            }
        case .null, .bool:
            break
        }
        if let all = keywords["allOf"]?.arrayValue {
            for subschema in all { evaluate(subschema, instance, at: pointer, errors: &errors) }
        }
        if let any = keywords["anyOf"]?.arrayValue, !any.contains(where: { isValid($0, instance, at: pointer) }) {
            fail("anyOf", "the value matches none of the allowed forms")
        }
        if let one = keywords["oneOf"]?.arrayValue {
            let matches = one.filter { isValid($0, instance, at: pointer) }.count
            if matches != 1 {
                fail("oneOf", matches == 0 ? "the value matches none of the allowed forms" : "the value matches \(matches) forms where exactly one is allowed")
            }
        }
        if let not = keywords["not"], isValid(not, instance, at: pointer) {
            fail("not", "the value has a form that is not allowed here")
        }
        if let condition = keywords["if"] {
            if isValid(condition, instance, at: pointer) {
                if let then = keywords["then"] { evaluate(then, instance, at: pointer, errors: &errors) }
            } else if let otherwise = keywords["else"] {
                evaluate(otherwise, instance, at: pointer, errors: &errors)
            }
        }
    }

    private func isValid(_ schema: JSONValue, _ instance: JSONValue, at pointer: JSONPointer) -> Bool {
        var errors: [FormatError] = []
        evaluate(schema, instance, at: pointer, errors: &errors)
        return errors.isEmpty
    }

    private func evaluateObject(_ keywords: JSONObject, _ object: JSONObject, at pointer: JSONPointer, errors: inout [FormatError]) {
        for key in keywords["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where !object.contains(key) {
            errors.append(FormatError(.schema("required"), "the required key \"\(key)\" is missing", at: pointer))
        }
        if let dependent = keywords["dependentRequired"]?.objectValue {
            for (trigger, needed) in dependent where object.contains(trigger) {
                for key in needed.arrayValue?.compactMap(\.stringValue) ?? [] where !object.contains(key) {
                    errors.append(FormatError(.schema("dependentRequired"), "\"\(trigger)\" is present, so \"\(key)\" is required", at: pointer))
                }
            }
        }
        if let minimum = keywords["minProperties"]?.numberValue?.int64Value, object.count < minimum {
            errors.append(FormatError(.schema("minProperties"), "the object has \(object.count) members, fewer than \(minimum)", at: pointer))
        }
        if let maximum = keywords["maxProperties"]?.numberValue?.int64Value, object.count > maximum {
            errors.append(FormatError(.schema("maxProperties"), "the object has \(object.count) members, more than \(maximum)", at: pointer))
        }
        let properties = keywords["properties"]?.objectValue
        let patternProperties = keywords["patternProperties"]?.objectValue
        for (key, value) in object {
            var matched = false
            if let subschema = properties?[key] {
                matched = true
                evaluate(subschema, value, at: pointer / key, errors: &errors)
            }
            for (pattern, subschema) in patternProperties ?? JSONObject() where matches(pattern, key) {
                matched = true
                evaluate(subschema, value, at: pointer / key, errors: &errors)
            }
            if !matched, let additional = keywords["additionalProperties"] {
                if additional == .bool(false) {
                    errors.append(FormatError(.schema("additionalProperties"), "the key \"\(key)\" is not allowed here", at: pointer / key))
                } else {
                    evaluate(additional, value, at: pointer / key, errors: &errors)
                }
            }
            if let names = keywords["propertyNames"] {
                evaluate(names, .string(key), at: pointer / key, errors: &errors)
            }
        }
    }

    private func evaluateArray(_ keywords: JSONObject, _ array: [JSONValue], at pointer: JSONPointer, errors: inout [FormatError]) {
        let prefix = keywords["prefixItems"]?.arrayValue ?? []
        for (i, element) in array.enumerated() {
            if i < prefix.count {
                evaluate(prefix[i], element, at: pointer / i, errors: &errors)
            } else if let items = keywords["items"] {
                evaluate(items, element, at: pointer / i, errors: &errors)
            }
        }
        if let minimum = keywords["minItems"]?.numberValue?.int64Value, array.count < minimum {
            errors.append(FormatError(.schema("minItems"), "the array has \(array.count) elements, fewer than \(minimum)", at: pointer))
        }
        if let maximum = keywords["maxItems"]?.numberValue?.int64Value, array.count > maximum {
            errors.append(FormatError(.schema("maxItems"), "the array has \(array.count) elements, more than \(maximum)", at: pointer))
        }
        if keywords["uniqueItems"] == .bool(true) {
            outer: for i in array.indices {
                for j in array.indices where j > i && Self.equal(array[i], array[j]) {
                    errors.append(FormatError(.schema("uniqueItems"), "elements \(i) and \(j) are equal; the array's elements must be unique", at: pointer))
                    break outer
                }
            }
        }
    }

    private func evaluateString(_ keywords: JSONObject, _ string: String, at pointer: JSONPointer, errors: inout [FormatError]) {
        let length = string.unicodeScalars.count
        if let minimum = keywords["minLength"]?.numberValue?.int64Value, length < minimum {
            errors.append(FormatError(.schema("minLength"), "the string has \(length) characters, fewer than \(minimum)", at: pointer))
        }
        if let maximum = keywords["maxLength"]?.numberValue?.int64Value, length > maximum {
            errors.append(FormatError(.schema("maxLength"), "the string has \(length) characters, more than \(maximum)", at: pointer))
        }
        if let pattern = keywords["pattern"]?.stringValue, !matches(pattern, string) {
            errors.append(FormatError(.schema("pattern"), "the string does not match the pattern \(pattern)", at: pointer))
        }
    }

    private func matches(_ pattern: String, _ string: String) -> Bool {
        guard let regex = patterns[pattern] else { return false }
        return (try? regex.regex.firstMatch(in: string)) != nil
    }

    private static func hasType(_ value: JSONValue, _ type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("number", .number), ("string", .string),
             ("array", .array), ("object", .object): true
        case ("integer", .number(let number)): number.isMathematicalInteger
        default: false
        }
    }

    /// JSON Schema equality: numbers by value, objects regardless of member order, and
    /// booleans never equal to numbers.
    private static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool { a == b }
}

private func < (lhs: (JSONPointer, FormatError.Code), rhs: (JSONPointer, FormatError.Code)) -> Bool {
    lhs.0 != rhs.0 ? lhs.0 < rhs.0 : lhs.1 < rhs.1
}

/// A compiled pattern. `Regex` is not declared `Sendable`, but a compiled regex is never
/// mutated after `init`, and matching does not change it, so sharing it is safe.
private struct CompiledPattern: @unchecked Sendable {
    let regex: Regex<AnyRegexOutput>
}
