import Testing
import JSONDocument

@Suite("JSON parser")
struct JSONParserTests {
    @Test(
        "the value budget (Spec/v2-json.md 3.2): values, not keys, counted; json.too-large at the first value beyond it",
        arguments: [(5, nil), (4, 7), (3, 4), (0, 0)] as [(Int, Int?)])
    func valueBudget(maximum: Int, offset: Int?) throws {
        // "[1,[2],3]" holds five values: the outer array, 1, the inner array, 2 and 3 (at 7).
        var options = JSONReadingOptions()
        var budget = DecodedValueBudget(storedBytes: 9)
        budget.maximumValues = maximum
        options.valueBudget = budget
        var read = 0
        do {
            _ = try JSONParser.parse(Array("[1,[2],3]".utf8), options: options, valuesRead: &read)
            #expect(offset == nil)
            #expect(read == 5)
        } catch {
            #expect(error.code == .jsonTooLarge)
            #expect(error.location.offset == offset)
            #expect(error.message.contains("more than \(maximum) JSON values"), "\(error.message)")
        }
        // Keys are not values: one object of two members is three.
        budget.maximumValues = 3
        options.valueBudget = budget
        #expect(try JSONParser.parse(Array(#"{"a":1,"b":2}"#.utf8), options: options).objectValue?.count == 2)
    }

    @Test("a budget is 2 values per stored byte, at least 65,536")
    func budgetFromSize() {
        #expect(DecodedValueBudget(storedBytes: 0).maximumValues == 65_536)
        #expect(DecodedValueBudget(storedBytes: 32_768).maximumValues == 65_536)
        #expect(DecodedValueBudget(storedBytes: 1_000_000).maximumValues == 2_000_000)
        #expect(DecodedValueBudget(storedBytes: .max).maximumValues == .max)
    }

    @Test("integers keep every digit, including 2^53 + 1 and the int64 extremes")
    func exactIntegers() throws {
        let value = try JSONParser.parse(#"[9007199254740993, -9223372036854775808, 9223372036854775807, 12345678901234567890123]"#)
        let numbers = try #require(value.arrayValue).compactMap(\.numberValue)
        #expect(numbers.map(\.int64Value) == [9_007_199_254_740_993, .min, .max, nil])
        #expect(numbers[3].text == "12345678901234567890123")
        #expect(JSONWriter().string(value) == "[9007199254740993,-9223372036854775808,9223372036854775807,12345678901234567890123]")
    }

    @Test(
        "each syntax error has its code and the byte offset where reading stopped",
        arguments: [
            ("{\"a\":1", "json.unexpected-end", 6),
            ("", "json.unexpected-end", 0),
            ("{\"a\" 1}", "json.syntax", 5),
            ("[01]", "json.syntax", 1),
            ("[1.]", "json.syntax", 3),
            ("[NaN]", "json.syntax", 1),
            ("[tru]", "json.syntax", 4),
            ("{\"a\":1,}", "json.trailing-comma", 7),
            ("[1,2,]", "json.trailing-comma", 5),
            ("{\"a\":1,\"a\":2}", "json.duplicate-key", 7),
            ("[\"\\x\"]", "json.syntax", 2),
            ("[\"\\ud800\"]", "json.syntax", 2),
            ("[\"a\u{01}\"]", "json.syntax", 3),
            ("[1] 2", "json.syntax", 4),
            ("\u{FEFF}[1]", "json.syntax", 0),
        ])
    func syntaxErrors(input: String, code: String, offset: Int) {
        #expect(throws: FormatError.self) { try JSONParser.parse(input) }
        do {
            _ = try JSONParser.parse(input)
        } catch {
            #expect(error.code.rawValue == code)
            #expect(error.location.offset == offset)
        }
    }

    @Test(
        "invalid UTF-8 is reported at the offending byte",
        arguments: [
            ([0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D] as [UInt8], 3),  // bad continuation
            ([0x5B, 0x22, 0xC0, 0x80, 0x22, 0x5D], 2),  // overlong NUL
            ([0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D], 3),  // encoded surrogate
            ([0x5B, 0x22, 0xFF, 0x22, 0x5D], 2),
        ])
    func invalidUTF8(bytes: [UInt8], offset: Int) {
        do {
            _ = try JSONParser.parse(bytes)
            Issue.record("accepted invalid UTF-8")
        } catch {
            #expect(error.code == .jsonInvalidUTF8)
            #expect(error.location.offset == offset)
        }
    }

    @Test("line and column are 1-based and count bytes")
    func lineAndColumn() {
        do {
            _ = try JSONParser.parse("{\n  \"a\": [1,\n  2,,]\n}")
            Issue.record("accepted a double comma")
        } catch {
            #expect(error.location.line == 3)
            #expect(error.location.column == 5)
        }
    }

    @Test("a duplicate key names the object by JSON pointer")
    func duplicateKeyPointer() {
        do {
            _ = try JSONParser.parse(#"{"a":{"b/c":{"x":1,"x":2}}}"#)
            Issue.record("accepted a duplicate key")
        } catch {
            #expect(error.code == .jsonDuplicateKey)
            #expect(error.location.pointer?.description == "/a/b~1c")
        }
    }

    @Test("trailing commas are accepted only in lenient mode")
    func lenientTrailingCommas() throws {
        let text = "[{\"a\": [1, 2,], },]"
        #expect(throws: FormatError.self) { try JSONParser.parse(text) }
        let value = try JSONParser.parse(text, options: .lenient)
        #expect(JSONWriter().string(value) == #"[{"a":[1,2]}]"#)
        #expect(throws: FormatError.self) { try JSONParser.parse("[1,,]", options: .lenient) }
    }

    @Test("nesting is limited: 64 levels parse, the 65th opening bracket is refused")
    func depthLimit() throws {
        _ = try JSONParser.parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64))
        do {
            _ = try JSONParser.parse(String(repeating: "[", count: 65) + String(repeating: "]", count: 65))
            Issue.record("accepted 65 levels")
        } catch {
            #expect(error.code == .jsonTooDeep)
            #expect(error.location.offset == 64)
        }
    }

    @Test("size limits refuse oversized documents, strings and numbers")
    func sizeLimits() {
        var options = JSONReadingOptions()
        options.maximumBytes = 10
        #expect(throws: FormatError.self) { try JSONParser.parse("[1,2,3,4,5,6]", options: options) }
        options = JSONReadingOptions()
        options.maximumStringBytes = 4
        #expect(throws: FormatError.self) { try JSONParser.parse(#"["abcdefgh"]"#, options: options) }
        options = JSONReadingOptions()
        options.maximumNumberLength = 5
        #expect(throws: FormatError.self) { try JSONParser.parse("[1234567]", options: options) }
    }

    @Test("the string limit counts decoded UTF-8 bytes: exactly the limit is accepted, one more is not")
    func stringLimitBoundary() throws {
        var options = JSONReadingOptions()
        options.maximumStringBytes = 4
        #expect(try JSONParser.parse(#"["abcd"]"#, options: options).arrayValue?.first?.stringValue == "abcd")
        // Six escapes decode to four bytes: accepted although the raw text is 24 bytes long.
        #expect(try JSONParser.parse(#"["\u0041\u0042\u0043\u0044"]"#, options: options).arrayValue?.first?.stringValue == "ABCD")
        #expect(try JSONParser.parse(#"["\u00e9\u00e9"]"#, options: options).arrayValue?.first?.stringValue == "éé")
        for refused in [#"["abcde"]"#, #"["\u00e9\u00e9a"]"#, #"["éé\n"]"#] {
            do {
                _ = try JSONParser.parse(refused, options: options)
                Issue.record("accepted \(refused)")
            } catch {
                #expect(error.code == .jsonTooLarge)
                #expect(error.location.offset == 1, "the opening quote")
            }
        }
        // The default limit, at its boundary (Spec/v2-json.md 3.2: 16,777,216 bytes is accepted).
        let limit = JSONReadingOptions().maximumStringBytes
        let exact = #"[""# + String(repeating: "x", count: limit) + #""]"#
        #expect(try JSONParser.parse(exact).arrayValue?.first?.stringValue?.utf8.count == limit)
        #expect(throws: FormatError.self) { try JSONParser.parse(#"[""# + String(repeating: "x", count: limit + 1) + #""]"#) }
    }

    @Test("escapes decode, including surrogate pairs")
    func escapes() throws {
        let value = try JSONParser.parse(#"["\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\u0000"]"#)
        #expect(value.arrayValue?.first?.stringValue == "\"\\/\u{08}\u{0C}\n\r\t\u{E9}\u{1F600}\u{0}")
    }

    @Test("numbers compare exactly by value, whatever their text")
    func numberComparison() {
        #expect(JSONNumber(text: "1.0") == JSONNumber(text: "1"))
        #expect(JSONNumber(text: "1e2") == JSONNumber(text: "100"))
        #expect(JSONNumber(text: "-0") == JSONNumber(text: "0.0"))
        #expect(JSONNumber(text: "9223372036854775808").compare(JSONNumber(text: "9223372036854775807")) == .greater)
        #expect(JSONNumber(text: "-9223372036854775809").compare(JSONNumber(text: "-9223372036854775808")) == .less)
        #expect(JSONNumber(text: "0.1").compare(JSONNumber(text: "0.10000000000000000000001")) == .less)
        #expect(JSONNumber(text: "1e2").isMathematicalInteger)
        #expect(!JSONNumber(text: "1.5").isMathematicalInteger)
    }
}

@Suite("Exact string identity")
struct ExactStringTests {
    @Test("canonically equivalent but different code points are different keys and values")
    func decomposedKeys() throws {
        let value = try JSONParser.parse("{\"Caf\u{E9}\":1,\"Cafe\u{301}\":2}")
        #expect(value.objectValue?.count == 2)
        #expect(JSONValue.string("Caf\u{E9}") != JSONValue.string("Cafe\u{301}"))
        #expect(ExactString("Caf\u{E9}") != ExactString("Cafe\u{301}"))
    }

    @Test("the same representation is the same string; another representation of the same bytes is equal too")
    func representation() {
        let long = "7E4D2C1B-9A8F-4E6D-B5C4-3A2B1C0D9E8F", copy = long
        let rebuilt = String(decoding: Array(long.utf8), as: UTF8.self)
        #expect(ExactString.identical(long, copy) && ExactString.identical("name", "nam" + "e"))
        #expect(!ExactString.identical(long, rebuilt) && ExactString(long) == ExactString(rebuilt))
        #expect(!ExactString.identical("name", "names") && ExactString("name") != ExactString("names"))
        #expect(ExactString.representationHash(long) == ExactString.representationHash(copy))
    }

    @Test("a string's hash counts its length: keys made of strings split at another byte hash apart")
    func hashCountsLength() {
        // Hashed as bytes alone, both pairs fed "abc" to the hasher: every such key collided.
        #expect([ExactString("ab"), ExactString("c")].hashValue != [ExactString("a"), ExactString("bc")].hashValue)
        #expect(JSONValue.array([.string("ab"), .string("")]).hashValue != JSONValue.array([.string("a"), .string("b")]).hashValue)
    }

    @Test("prefix keys: the first 8 bytes big-endian, zero-padded; a smaller key is an earlier string in UTF-8 order")
    func prefixKeys() {
        #expect(ExactString.prefixKey("") == 0)
        #expect(ExactString.prefixKey("A") == 0x4100_0000_0000_0000)
        #expect(ExactString.prefixKey("ABCDEFGH") == 0x4142_4344_4546_4748)
        #expect(ExactString.prefixKey("ABCDEFGHIJ") == ExactString.prefixKey("ABCDEFGH"))
        #expect(ExactString.prefixKey("\u{E9}") == 0xC3A9_0000_0000_0000)
        // Short, long, shared prefixes, a zero byte and multi-byte characters, every pair.
        let strings = ["", "\u{0}", "A", "A\u{0}", "AB", "ABCDEFG", "ABCDEFGH", "ABCDEFGHI", "ABCDEFGI", "B", "Caf\u{E9}", "Cafe\u{301}", "\u{1F600}", "z"]
        for a in strings {
            for b in strings where ExactString.prefixKey(a) != ExactString.prefixKey(b) {
                #expect((ExactString.prefixKey(a) < ExactString.prefixKey(b)) == utf8Precedes(a, b), "\(a.debugDescription) \(b.debugDescription)")
            }
        }
    }
}

private func utf8Precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

@Suite("Exact decimal arithmetic")
struct ExactDecimalTests {
    @Test(
        "sums and shifts are exact and print in plain notation",
        arguments: [
            ("1.5", "-2.25", 0, "-0.75"), ("999", "1", 0, "1000"), ("0.001", "0", 3, "1"), ("-1.5", "1.5", 0, "0"),
            ("58472395723.0", "978307200", 3, "59450702923000"), ("1e-20", "1", 0, "1.00000000000000000001"),
            ("-978307200000", "978307198500", -3, "-1.5"), ("12345678901234567890123456789.5", "0.5", 0, "12345678901234567890123456790"),
        ])
    func arithmetic(a: String, b: String, shift: Int, expected: String) {
        #expect(ExactDecimal(a).adding(ExactDecimal(b)).shifted(byPowerOfTen: shift).plainText == expected)
    }
}
