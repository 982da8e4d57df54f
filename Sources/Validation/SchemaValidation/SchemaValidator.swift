import Foundation
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
/// fixture and fails if the two disagree. The schema is compiled once into a tree of nodes, so
/// validating a file costs no keyword look-ups.
package struct SchemaValidator: Sendable {
    package static let supportedKeywords: Set<String> = [
        "$schema", "$id", "$defs", "$ref", "$comment", "title", "description",
        "type", "enum", "const",
        "properties", "required", "additionalProperties", "patternProperties", "propertyNames",
        "minProperties", "maxProperties", "dependentRequired",
        "items", "prefixItems", "minItems", "maxItems", "uniqueItems",
        "minLength", "maxLength", "pattern", "minimum", "maximum",
        "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    ]

    private let root: SchemaNode

    /// Loads a schema, refusing unknown keywords, unresolvable `$ref`s and invalid patterns.
    package init(schema: JSONValue) throws(FormatError) {
        var compiler = SchemaCompiler(document: schema)
        root = try compiler.compile(schema, at: .root)
        try compiler.resolveReferences()
    }

    /// Every violation, one per (code, pointer), sorted by pointer then code (Spec/v2-json.md
    /// section 4), within the report bound of Spec/README.md section 6.2: the first `limit`, then
    /// one `format.too-many-errors` entry counting the rest. Empty means valid.
    package func validate(_ instance: JSONValue, limit: Int = 100) -> [FormatError] {
        var errors = BoundedErrorList(limit: limit, order: .pointerThenCode)
        _ = root.evaluate(instance, at: .root, errors: &errors, stopAtFirst: false)
        return errors.finish()
    }

    package func isValid(_ instance: JSONValue) -> Bool {
        var errors = BoundedErrorList(limit: 1, order: .found)
        return root.evaluate(instance, at: .root, errors: &errors, stopAtFirst: true)
    }
}

/// One compiled (sub)schema. Built once by ``SchemaCompiler`` and never changed afterwards,
/// which is what makes sharing it between threads safe; `$ref` targets are linked after all
/// nodes exist, so the tree can be recursive.
final class SchemaNode: @unchecked Sendable {
    var alwaysFalse = false
    var reference: SchemaNode?
    var referenceName: String?
    var types: [String]?
    var enumValues: [JSONValue]?
    var constValue: JSONValue?
    var properties: [ExactString: SchemaNode] = [:]
    var patternProperties: [(NSRegularExpression, SchemaNode)] = []
    var additionalProperties: SchemaNode?
    var propertyNames: SchemaNode?
    var required: [String] = []
    var dependentRequired: [(String, [String])] = []
    var minProperties: Int64?, maxProperties: Int64?
    var prefixItems: [SchemaNode] = []
    var items: SchemaNode?
    var minItems: Int64?, maxItems: Int64?
    var uniqueItems = false
    var minLength: Int64?, maxLength: Int64?
    var pattern: (text: String, regex: NSRegularExpression)?
    var minimum: JSONNumber?, maximum: JSONNumber?
    var allOf: [SchemaNode] = [], anyOf: [SchemaNode] = [], oneOf: [SchemaNode] = []
    var not: SchemaNode?
    var condition: SchemaNode?, then: SchemaNode?, otherwise: SchemaNode?

    /// Appends violations; returns whether there were none. With `stopAtFirst` it returns at
    /// the first violation (for branches of `anyOf`, `oneOf`, `not` and `if`).
    func evaluate(_ instance: JSONValue, at pointer: JSONPointer, errors: inout BoundedErrorList, stopAtFirst: Bool) -> Bool {
        let start = errors.count
        func fail(_ keyword: String, _ message: @autoclosure () -> String, at location: JSONPointer? = nil) -> Bool {
            errors.append(FormatError(.schema(keyword), stopAtFirst ? "" : message(), at: location ?? pointer))
            return stopAtFirst
        }
        func done() -> Bool { errors.count == start }
        if alwaysFalse, fail("false", "no value is allowed here") { return false }
        if let reference, !reference.evaluate(instance, at: pointer, errors: &errors, stopAtFirst: stopAtFirst), stopAtFirst { return false }
        if let types, !types.contains(where: { Self.has(instance, type: $0) }),
            fail("type", "expected \(types.joined(separator: " or ")), found \(instance.typeName)")
        {
            return false
        }
        if let enumValues, !enumValues.contains(instance),
            fail("enum", "the value is not one of the allowed values \(JSONWriter().string(.array(enumValues)))")
        {
            return false
        }
        if let constValue, constValue != instance, fail("const", "the value must be \(JSONWriter().string(constValue))") { return false }
        switch instance {
        case .object(let object):
            if !evaluateObject(object, at: pointer, errors: &errors, stopAtFirst: stopAtFirst) && stopAtFirst { return false }
        case .array(let array):
            if !evaluateArray(array, at: pointer, errors: &errors, stopAtFirst: stopAtFirst) && stopAtFirst { return false }
        case .string(let string):
            let length = Int64(string.unicodeScalars.count)
            if let minLength, length < minLength, fail("minLength", "the string has \(length) characters, fewer than \(minLength)") { return false }
            if let maxLength, length > maxLength, fail("maxLength", "the string has \(length) characters, more than \(maxLength)") { return false }
            if let pattern, pattern.regex.firstMatch(in: string, range: NSRange(string.startIndex..., in: string)) == nil,
                fail("pattern", "the string does not match the pattern \(pattern.text)")
            {
                return false
            }
        case .number(let number):
            if let minimum, number.compare(minimum) == .less, fail("minimum", "\(number.text) is less than the minimum \(minimum.text)") { return false }
            if let maximum, number.compare(maximum) == .greater, fail("maximum", "\(number.text) is greater than the maximum \(maximum.text)") { return false }
        case .null, .bool:
            break
        }
        for subschema in allOf where !subschema.evaluate(instance, at: pointer, errors: &errors, stopAtFirst: stopAtFirst) && stopAtFirst {
            return false
        }
        if !anyOf.isEmpty, !anyOf.contains(where: { $0.accepts(instance, at: pointer) }),
            fail("anyOf", "the value matches none of the allowed forms")
        {
            return false
        }
        if !oneOf.isEmpty {
            let matches = oneOf.filter { $0.accepts(instance, at: pointer) }.count
            if matches != 1,
                fail("oneOf", matches == 0 ? "the value matches none of the allowed forms" : "the value matches \(matches) forms where exactly one is allowed")
            {
                return false
            }
        }
        if let not, not.accepts(instance, at: pointer), fail("not", "the value has a form that is not allowed here") { return false }
        if let condition {
            let branch = condition.accepts(instance, at: pointer) ? then : otherwise
            if let branch, !branch.evaluate(instance, at: pointer, errors: &errors, stopAtFirst: stopAtFirst) && stopAtFirst { return false }
        }
        return done()
    }

    func accepts(_ instance: JSONValue, at pointer: JSONPointer) -> Bool {
        var ignored = BoundedErrorList(limit: 1, order: .found)
        return evaluate(instance, at: pointer, errors: &ignored, stopAtFirst: true)
    }

    private func evaluateObject(_ object: JSONObject, at pointer: JSONPointer, errors: inout BoundedErrorList, stopAtFirst: Bool) -> Bool {
        let start = errors.count
        func fail(_ keyword: String, _ message: @autoclosure () -> String, at location: JSONPointer) -> Bool {
            errors.append(FormatError(.schema(keyword), stopAtFirst ? "" : message(), at: location))
            return stopAtFirst
        }
        for key in required where !object.contains(key) {
            if fail("required", "the required key \"\(key)\" is missing", at: pointer) { return false }
        }
        for (trigger, needed) in dependentRequired where object.contains(trigger) {
            for key in needed where !object.contains(key) {
                if fail("dependentRequired", "\"\(trigger)\" is present, so \"\(key)\" is required", at: pointer) { return false }
            }
        }
        if let minProperties, object.count < minProperties,
            fail("minProperties", "the object has \(object.count) members, fewer than \(minProperties)", at: pointer)
        {
            return false
        }
        if let maxProperties, object.count > maxProperties,
            fail("maxProperties", "the object has \(object.count) members, more than \(maxProperties)", at: pointer)
        {
            return false
        }
        for (key, value) in object {
            let memberPointer = pointer / key
            var matched = false
            if let subschema = properties[ExactString(key)] {
                matched = true
                if !subschema.evaluate(value, at: memberPointer, errors: &errors, stopAtFirst: stopAtFirst) && stopAtFirst { return false }
            }
            for (regex, subschema) in patternProperties where regex.firstMatch(in: key, range: NSRange(key.startIndex..., in: key)) != nil {
                matched = true
                if !subschema.evaluate(value, at: memberPointer, errors: &errors, stopAtFirst: stopAtFirst) && stopAtFirst { return false }
            }
            if !matched, let additionalProperties {
                if additionalProperties.alwaysFalse && additionalProperties.isOnlyFalse {
                    if fail("additionalProperties", "the key \"\(key)\" is not allowed here", at: memberPointer) { return false }
                } else if !additionalProperties.evaluate(value, at: memberPointer, errors: &errors, stopAtFirst: stopAtFirst) && stopAtFirst {
                    return false
                }
            }
            if let propertyNames, !propertyNames.evaluate(.string(key), at: memberPointer, errors: &errors, stopAtFirst: stopAtFirst) && stopAtFirst {
                return false
            }
        }
        return errors.count == start
    }

    private func evaluateArray(_ array: [JSONValue], at pointer: JSONPointer, errors: inout BoundedErrorList, stopAtFirst: Bool) -> Bool {
        let start = errors.count
        func fail(_ keyword: String, _ message: @autoclosure () -> String) -> Bool {
            errors.append(FormatError(.schema(keyword), stopAtFirst ? "" : message(), at: pointer))
            return stopAtFirst
        }
        for (i, element) in array.enumerated() {
            let subschema = i < prefixItems.count ? prefixItems[i] : items
            if let subschema, !subschema.evaluate(element, at: pointer / i, errors: &errors, stopAtFirst: stopAtFirst) && stopAtFirst {
                return false
            }
        }
        if let minItems, array.count < minItems, fail("minItems", "the array has \(array.count) elements, fewer than \(minItems)") { return false }
        if let maxItems, array.count > maxItems, fail("maxItems", "the array has \(array.count) elements, more than \(maxItems)") { return false }
        if uniqueItems, let (i, j) = Self.firstDuplicate(array), fail("uniqueItems", "elements \(i) and \(j) are equal; the array's elements must be unique") {
            return false
        }
        return errors.count == start
    }

    /// A node that is nothing but the boolean schema `false`.
    var isOnlyFalse: Bool { alwaysFalse && reference == nil && types == nil }

    private static func firstDuplicate(_ array: [JSONValue]) -> (Int, Int)? {
        var seen: [JSONValue: Int] = [:]
        for (j, element) in array.enumerated() {
            if let i = seen[element] { return (i, j) }
            seen[element] = j
        }
        return nil
    }

    private static func has(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("number", .number), ("string", .string),
            ("array", .array), ("object", .object):
            true
        case ("integer", .number(let number)): number.isMathematicalInteger
        default: false
        }
    }
}

/// Turns a schema document into ``SchemaNode``s, refusing anything the validator would not
/// enforce.
struct SchemaCompiler {
    let document: JSONValue
    private var definitions: [String: SchemaNode] = [:]
    private var references: [(node: SchemaNode, name: String, path: JSONPointer)] = []
    private var patterns: [String: NSRegularExpression] = [:]

    init(document: JSONValue) { self.document = document }

    mutating func compile(_ schema: JSONValue, at path: JSONPointer) throws(FormatError) -> SchemaNode {
        let node = SchemaNode()
        if case .bool(let flag) = schema {
            node.alwaysFalse = !flag
            return node
        }
        guard case .object(let keywords) = schema else {
            throw FormatError(.schemaUnsupported, "a schema must be an object or a boolean", at: path)
        }
        func integer(_ value: JSONValue, _ keyword: String) throws(FormatError) -> Int64 {
            guard let int = value.numberValue?.integerValue, int >= 0 else {
                throw FormatError(.schemaUnsupported, "\"\(keyword)\" must be a non-negative integer", at: path / keyword)
            }
            return int
        }
        func list(_ value: JSONValue, _ keyword: String) throws(FormatError) -> [SchemaNode] {
            guard case .array(let elements) = value, !elements.isEmpty else {
                throw FormatError(.schemaUnsupported, "\"\(keyword)\" must be a non-empty array", at: path / keyword)
            }
            var nodes: [SchemaNode] = []
            for (i, element) in elements.enumerated() { nodes.append(try compile(element, at: path / keyword / i)) }
            return nodes
        }
        func members(_ value: JSONValue, _ keyword: String) throws(FormatError) -> JSONObject {
            guard case .object(let object) = value else {
                throw FormatError(.schemaUnsupported, "\"\(keyword)\" must be an object", at: path / keyword)
            }
            return object
        }
        func strings(_ value: JSONValue, at location: JSONPointer) throws(FormatError) -> [String] {
            guard case .array(let elements) = value, elements.allSatisfy({ $0.stringValue != nil }) else {
                throw FormatError(.schemaUnsupported, "expected an array of strings", at: location)
            }
            return elements.compactMap(\.stringValue)
        }
        for (keyword, value) in keywords {
            let here = path / keyword
            guard SchemaValidator.supportedKeywords.contains(keyword) else {
                throw FormatError(.schemaUnsupported, "the keyword \"\(keyword)\" is not implemented by this validator", at: here)
            }
            switch keyword {
            case "$defs":
                for (name, subschema) in try members(value, keyword) {
                    let compiled = try compile(subschema, at: here / name)
                    if path == .root { definitions[name] = compiled }
                }
            case "$ref":
                guard case .string(let reference) = value, reference.hasPrefix("#/$defs/"),
                    let pointer = JSONPointer(parsing: String(reference.dropFirst())), pointer.tokens.count == 2,
                    document[pointer] != nil
                else {
                    throw FormatError(.schemaUnsupported, "\"$ref\" must be a local reference of the form \"#/$defs/NAME\" that exists", at: here)
                }
                references.append((node, pointer.tokens[1], here))
            case "type":
                if let single = value.stringValue { node.types = [single] } else { node.types = try strings(value, at: here) }
            case "enum":
                guard case .array(let options) = value else {
                    throw FormatError(.schemaUnsupported, "\"enum\" must be an array", at: here)
                }
                node.enumValues = options
            case "const": node.constValue = value
            case "properties":
                for (name, subschema) in try members(value, keyword) {
                    node.properties[ExactString(name)] = try compile(subschema, at: here / name)
                }
            case "patternProperties":
                for (pattern, subschema) in try members(value, keyword) {
                    node.patternProperties.append((try regex(pattern, at: here / pattern), try compile(subschema, at: here / pattern)))
                }
            case "additionalProperties": node.additionalProperties = try compile(value, at: here)
            case "propertyNames": node.propertyNames = try compile(value, at: here)
            case "required": node.required = try strings(value, at: here)
            case "dependentRequired":
                for (trigger, needed) in try members(value, keyword) {
                    node.dependentRequired.append((trigger, try strings(needed, at: here / trigger)))
                }
            case "minProperties": node.minProperties = try integer(value, keyword)
            case "maxProperties": node.maxProperties = try integer(value, keyword)
            case "prefixItems": node.prefixItems = try list(value, keyword)
            case "items": node.items = try compile(value, at: here)
            case "minItems": node.minItems = try integer(value, keyword)
            case "maxItems": node.maxItems = try integer(value, keyword)
            case "uniqueItems": node.uniqueItems = value == .bool(true)
            case "minLength": node.minLength = try integer(value, keyword)
            case "maxLength": node.maxLength = try integer(value, keyword)
            case "pattern":
                guard case .string(let pattern) = value else {
                    throw FormatError(.schemaUnsupported, "\"pattern\" must be a string", at: here)
                }
                node.pattern = (pattern, try regex(pattern, at: here))
            case "minimum", "maximum":
                guard case .number(let number) = value else {
                    throw FormatError(.schemaUnsupported, "\"\(keyword)\" must be a number", at: here)
                }
                if keyword == "minimum" { node.minimum = number } else { node.maximum = number }
            case "allOf": node.allOf = try list(value, keyword)
            case "anyOf": node.anyOf = try list(value, keyword)
            case "oneOf": node.oneOf = try list(value, keyword)
            case "not": node.not = try compile(value, at: here)
            case "if": node.condition = try compile(value, at: here)
            case "then": node.then = try compile(value, at: here)
            case "else": node.otherwise = try compile(value, at: here)
            default:
                break  // annotations: $schema, $id, $comment, title, description
            }
        }
        return node
    }

    /// Links every `$ref` to its compiled definition.
    func resolveReferences() throws(FormatError) {
        for (node, name, path) in references {
            guard let target = definitions[name] else {
                throw FormatError(.schemaUnsupported, "\"$ref\" names \"\(name)\", which is not a definition of the root schema", at: path)
            }
            node.reference = target
        }
    }

    private mutating func regex(_ pattern: String, at path: JSONPointer) throws(FormatError) -> NSRegularExpression {
        if let compiled = patterns[pattern] { return compiled }
        do {
            // ICU (through NSRegularExpression) matches code points, as ECMA-262 patterns do.
            let compiled = try NSRegularExpression(pattern: pattern)
            patterns[pattern] = compiled
            return compiled
        } catch {
            throw FormatError(.schemaUnsupported, "the pattern \"\(pattern)\" does not compile: \(error)", at: path)
        }
    }
}
