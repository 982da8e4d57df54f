import Testing
import JSONDocument
import SchemaValidation

@Suite("JSON Schema validator")
struct SchemaValidatorTests {
    func violations(_ schema: String, _ instance: String) throws -> [String] {
        let validator = try SchemaValidator(schema: try JSONParser.parse(schema))
        return validator.validate(try JSONParser.parse(instance)).map { "\($0.code)@\($0.location.pointer?.description ?? "-")" }
    }

    @Test(
        "each keyword reports its own code at the instance's pointer",
        arguments: [
            (#"{"type":"integer"}"#, "1.0", [String]()),
            (#"{"type":"integer"}"#, "1.5", ["schema.type@"]),
            (#"{"type":["string","null"]}"#, "null", []),
            (#"{"enum":[1,"a"]}"#, "1.0", []),
            (#"{"enum":[1,"a"]}"#, "true", ["schema.enum@"]),
            (#"{"const":{"a":[1]}}"#, #"{"a":[1.0]}"#, []),
            (#"{"required":["a","b"]}"#, #"{"a":1}"#, ["schema.required@"]),
            (#"{"properties":{"a":{"type":"string"}}}"#, #"{"a":1}"#, ["schema.type@/a"]),
            (#"{"additionalProperties":false,"properties":{"a":true}}"#, #"{"a":1,"b":2}"#, ["schema.additionalProperties@/b"]),
            (#"{"patternProperties":{"^x":{"type":"null"}},"additionalProperties":false}"#, #"{"xa":null,"y":1}"#, ["schema.additionalProperties@/y"]),
            (#"{"propertyNames":{"pattern":"^[0-9]+$"}}"#, #"{"12":1,"a/b":2}"#, ["schema.pattern@/a~1b"]),
            (#"{"dependentRequired":{"a":["b"]}}"#, #"{"a":1}"#, ["schema.dependentRequired@"]),
            (#"{"minProperties":1,"maxProperties":1}"#, "{}", ["schema.minProperties@"]),
            (#"{"prefixItems":[{"const":"t"}],"items":{"type":"number"},"minItems":2,"maxItems":3}"#, #"["t","x"]"#, ["schema.type@/1"]),
            (#"{"minItems":2}"#, "[1]", ["schema.minItems@"]),
            (#"{"uniqueItems":true}"#, "[1,2,1.0]", ["schema.uniqueItems@"]),
            (#"{"uniqueItems":true}"#, "[1,true]", []),
            (#"{"minLength":2,"maxLength":3}"#, #""é""#, ["schema.minLength@"]),
            (#"{"maxLength":1}"#, #""😀""#, []),
            (#"{"pattern":"b"}"#, #""abc""#, []),
            (#"{"pattern":"^(?!\\.\\.?$)[^/]+$"}"#, #""..""#, ["schema.pattern@"]),
            (#"{"minimum":0,"maximum":9223372036854775807}"#, "9223372036854775808", ["schema.maximum@"]),
            (#"{"minimum":0}"#, "-0.5", ["schema.minimum@"]),
            (#"{"anyOf":[{"type":"string"},{"type":"null"}]}"#, "1", ["schema.anyOf@"]),
            (#"{"oneOf":[{"type":"number"},{"type":"integer"}]}"#, "1", ["schema.oneOf@"]),
            (#"{"oneOf":[{"type":"number"},{"type":"integer"}]}"#, "1.5", []),
            (#"{"not":{"type":"null"}}"#, "null", ["schema.not@"]),
            (#"{"if":{"properties":{"k":{"const":0}}},"then":{"required":["v"]},"else":{"required":["w"]}}"#, #"{"k":0}"#, ["schema.required@"]),
            (#"{"if":{"properties":{"k":{"const":0}}},"then":{"required":["v"]},"else":{"required":["w"]}}"#, #"{"k":1,"w":1}"#, []),
            (#"{"allOf":[{"type":"object"},{"required":["a"]}]}"#, "{}", ["schema.required@"]),
            (##"{"$defs":{"n":{"type":"null"}},"properties":{"a":{"$ref":"#/$defs/n"}}}"##, #"{"a":0}"#, ["schema.type@/a"]),
            (#"{"items":false}"#, "[1]", ["schema.false@/0"]),
        ])
    func keywords(schema: String, instance: String, expected: [String]) throws {
        #expect(try violations(schema, instance) == expected)
    }

    @Test(
        "a schema using a keyword the validator does not implement is refused",
        arguments: [
            #"{"format":"date-time"}"#,
            #"{"properties":{"a":{"unevaluatedProperties":false}}}"#,
            #"{"$ref":"other.json#/x"}"#,
            ##"{"$ref":"#/$defs/missing"}"##,
            #"{"pattern":"("}"#,
        ])
    func unsupported(schema: String) {
        #expect(throws: FormatError.self) { try SchemaValidator(schema: try JSONParser.parse(schema)) }
    }

    @Test("the Spec's schemas are bundled, load, and are themselves draft 2020-12 documents")
    func bundledSchemasLoad() throws {
        for schema in BundledSchema.allCases {
            _ = try schema.validator()
            let document = try JSONParser.parse(schema.bytes)
            #expect(document[JSONPointer(["$schema"])] == .string("https://json-schema.org/draft/2020-12/schema"))
        }
    }
}

@Suite("Bounded error reports (Spec/README.md 6.2)")
struct BoundedReportTests {
    /// An object of `count` members that each violate `type`, and also twice the same `required`
    /// violation through `allOf` (a duplicate the report lists once and counts once).
    func instance(_ count: Int) throws -> (SchemaValidator, JSONValue) {
        let schema = #"{"allOf":[{"required":["zz"]},{"required":["zz"]}],"additionalProperties":{"type":"string"}}"#
        let members = (0..<count).map { #""m\#($0)":\#($0)"# }.joined(separator: ",")
        return (try SchemaValidator(schema: try JSONParser.parse(schema)), try JSONParser.parse("{\(members)}"))
    }

    @Test("a report keeps the first 100 in report order and counts the distinct rest")
    func firstHundredThenACount() throws {
        let (validator, document) = try instance(5_000)
        let everything = validator.validate(document, limit: 100_000)
        // 5,000 type violations and one required violation (its duplicate removed).
        #expect(everything.count == 5_001)
        #expect(!everything.contains { $0.code == .formatTooManyErrors })
        let bounded = validator.validate(document)
        #expect(bounded.count == 101)
        #expect(Array(bounded.prefix(100)) == Array(everything.prefix(100)))
        let last = try #require(bounded.last)
        #expect(last.code == .formatTooManyErrors)
        #expect(last.location.pointer == nil)
        #expect(last.message.contains("4901 more errors"), "5,001 distinct errors, 100 listed: \(last.message)")
    }

    @Test("exactly the limit needs no count; one more does", arguments: [(100, 100), (101, 101)])
    func boundary(members: Int, reported: Int) throws {
        // `members` type violations plus the required one: 101 or 102 errors in all.
        let (validator, document) = try instance(members - 1)
        let report = validator.validate(document)
        #expect(report.count == reported)
        #expect((report.last?.code == .formatTooManyErrors) == (members > 100))
    }
}
