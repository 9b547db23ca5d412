import LarderWire
import Testing

@Suite("Base64")
struct Base64Tests {
    private static let lenient = Base64.Rules(standard: true, urlSafe: true, padding: true, canonical: false)
    private static let strictURL = Base64.Rules(standard: false, urlSafe: true, padding: false, canonical: true)
    private static let strictStandard = Base64.Rules(standard: true, urlSafe: false, padding: true, canonical: true)

    @Test("RFC 4648 §10 test vectors, padded and not")
    func rfcVectors() {
        let vectors = [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
                       ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(plain.utf8, alphabet: .standard, padded: true) == encoded)
            let unpadded = String(encoded.prefix { $0 != "=" })
            #expect(Base64.encode(plain.utf8, alphabet: .urlSafe, padded: false) == unpadded)
            #expect(Base64.decode(encoded.utf8, rules: Self.strictStandard) == Array(plain.utf8))
            #expect(Base64.decode(unpadded.utf8, rules: Self.strictURL) == Array(plain.utf8))
        }
    }

    @Test("every length round trips in both alphabets, padded or not")
    func roundTrips() {
        for count in 0..<40 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            for alphabet in [Base64.Alphabet.standard, .urlSafe] {
                for padded in [false, true] {
                    let text = Base64.encode(bytes, alphabet: alphabet, padded: padded)
                    #expect(text.utf8.count % 4 == 0 || !padded)
                    #expect(Base64.decode(text.utf8, rules: Self.lenient) == bytes)
                }
            }
        }
    }

    @Test("the rules: alphabet, padding and canonical trailing bits")
    func rules() {
        #expect(Base64.encode([0xFB, 0xFF], alphabet: .urlSafe, padded: false) == "-_8")
        #expect(Base64.encode([0xFB, 0xFF], alphabet: .standard, padded: false) == "+/8")
        #expect(Base64.decode("-_8".utf8, rules: Self.strictURL) == [0xFB, 0xFF])
        #expect(Base64.decode("+/8".utf8, rules: Self.strictURL) == nil)
        #expect(Base64.decode("-_8".utf8, rules: Self.strictStandard) == nil)
        #expect(Base64.decode("-/8".utf8, rules: Self.lenient) == [0xFB, 0xFF])
        // Padding: refused where not allowed; when allowed, only to a multiple of 4 and only at the end.
        #expect(Base64.decode("Zg==".utf8, rules: Self.strictURL) == nil)
        for bad in ["Zg=", "Zg===", "Z===", "Zg==Zg==", "=Zg=", "Zm9=v"] {
            #expect(Base64.decode(bad.utf8, rules: Self.lenient) == nil, "\(bad)")
        }
        // Unused low bits of the last character: "Zh" is "f" with a stray bit.
        #expect(Base64.decode("Zh".utf8, rules: Self.strictURL) == nil)
        #expect(Base64.decode("Zm9vYh".utf8, rules: Self.strictStandard) == nil)
        #expect(Base64.decode("Zh==".utf8, rules: Self.lenient) == Array("f".utf8))
        // A lone character cannot encode a byte; characters outside both alphabets.
        for bad in ["A", "AAAAA", "****", "Zm 9v", "Zm9v\n", "é"] {
            #expect(Base64.decode(bad.utf8, rules: Self.lenient) == nil, "\(bad)")
        }
    }
}
