import LarderCLI
import Testing

@Suite("DisplayWidth and TableRenderer")
struct DisplayWidthTests {
    @Test("display width", arguments: [
        ("", 0), ("abc", 3), ("#AABBCC", 7), ("客廳", 4), ("a客b", 4), ("食品 Food", 9), ("ＡＢ", 4),
        ("ラーメン", 8), ("한국어", 6), ("e\u{301}", 1), ("🍙", 2), ("❤️", 2), ("🇹🇼", 2), ("👨‍👩‍👧", 2),
        ("。、", 4), ("é", 1), ("\u{200B}", 0),
    ])
    func width(text: String, expected: Int) {
        #expect(DisplayWidth.of(text) == expected)
    }

    @Test("columns line up by display width with CJK names")
    func cjkTable() {
        let table = TableRenderer(
            columns: [.init("NAME"), .init("COLOR"), .init("N", .right)],
            rows: [["客廳", "#FF5733", "1"], ["Kitchen", "#33B5FF", "12"], ["衛生用品x", "#000000", "123"]])
        let expected = """
            NAME       COLOR      N
            客廳       #FF5733    1
            Kitchen    #33B5FF   12
            衛生用品x  #000000  123

            """
        #expect(table.render() == expected)
        // Every line puts the COLOR column at the same display column.
        for line in table.render().split(separator: "\n") {
            let prefix = line.prefix { $0 != "#" && $0 != "C" }
            #expect(DisplayWidth.of(String(prefix)) == 11)
        }
    }

    @Test("no header, missing cells, and control characters made harmless")
    func edgeCases() {
        let table = TableRenderer(columns: [.init("A"), .init("B")],
                                  rows: [["x"], ["a\nb\u{1B}[31m", "y\u{9B}2J\u{202E}"]], showsHeader: false)
        #expect(table.render() == #"""
            x
            a\u{A}b\u{1B}[31m  y\u{9B}2J\u{202E}

            """#)
    }
}
