import LarderJSON
import LarderWire
import Testing

@Suite("JSON parser and renderer")
struct JSONParserTests {
    @Test func keepsBigIntegersAndNumberTextExactly() throws {
        let json = try JSONParser.parse(#"[18446744073709551615, -9223372036854775808, 1.0e-7, 0]"#)
        #expect(json == .array([.number("18446744073709551615"), .number("-9223372036854775808"),
                                .number("1.0e-7"), .number("0")]))
    }

    @Test func decodesUnicodeEscapesAndSurrogatePairs() throws {
        let json = try JSONParser.parse(#"{"k": "\u5eda\u623f \ud83c\udf59 廚房 \n\"\\\/"}"#)
        #expect(json["k"] == .string("廚房 🍙 廚房 \n\"\\/"))
    }

    @Test func keepsMemberOrderAndDuplicates() throws {
        let json = try JSONParser.parse(#"{"b": 1, "a": 2, "b": 3}"#)
        #expect(json == .object([.init("b", .number("1")), .init("a", .number("2")), .init("b", .number("3"))]))
    }

    @Test func renderingRoundTrips() throws {
        let json = JSON.object([
            .init("名", .string("廚房\u{1}\u{2028}\u{9B}\u{7F}")), .init("n", .array([.null, .bool(false), .number("-1.5e3")])),
            .init("e", .object([])), .init("a", .array([])),
        ])
        #expect(try JSONParser.parse(json.rendered()) == json)
        #expect(try JSONParser.parse(json.compact()) == json)
        #expect(json.compact() == #"{"名":"廚房\u0001\u2028\u009b\u007f","n":[null,false,-1.5e3],"e":{},"a":[]}"#)
    }

    @Test(arguments: [
        ("", "invalid JSON at line 1, column 1: unexpected end of input, expected a value"),
        ("{\"a\": 1,}", "invalid JSON at line 1, column 9: expected a member name in double quotes"),
        ("[1 2]", "invalid JSON at line 1, column 4: expected ',' or ']' in array"),
        ("01", "invalid JSON at line 1, column 2: unexpected text after the JSON value"),
        ("-", "invalid JSON at line 1, column 2: expected a digit"),
        ("1.", "invalid JSON at line 1, column 3: expected a digit after '.'"),
        ("\"a\nb\"", "invalid JSON at line 1, column 3: control character 0xA in string; escape it"),
        ("\"\\ud800\"", "invalid JSON at line 1, column 8: lone high surrogate \\uD800"),
        ("\"\\x\"", "invalid JSON at line 1, column 3: invalid escape \\'x'"),
        ("tru", "invalid JSON at line 1, column 1: unexpected text, expected true"),
        ("{} {}", "invalid JSON at line 1, column 4: unexpected text after the JSON value"),
        ("{\n\"廚房\": x}", "invalid JSON at line 2, column 7: unexpected character 'x', expected a value"),
    ])
    func rejects(_ text: String, _ message: String) {
        #expect(throws: RPCError.invalidArgument(message)) { try JSONParser.parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: RPCError.invalidArgument("invalid JSON at line 1, column 1: string is not valid UTF-8")) {
            try JSONParser.parse([0x22, 0xFF, 0xFE, 0x22])
        }
    }

    @Test func limitsNesting() throws {
        let deep = String(repeating: "[", count: JSONParser.maxDepth) + String(repeating: "]", count: JSONParser.maxDepth)
        #expect(try JSONParser.parse(deep) != .null)
        let tooDeep = "[" + deep + "]"
        #expect(throws: RPCError.self) { try JSONParser.parse(tooDeep) }
    }
}
