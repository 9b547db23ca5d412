import Foundation
import Testing

/// DESIGN.md's rule that C modules are leaves: no library module lets a C library's
/// types (protobuf-c, sqlite3, libpq, OpenSSL, nghttp2, epoll, ...) into its public API.
/// A Swift file may `import` or `package import` a C module, never `public import` or
/// `@_exported import` it. Checked in the sources, so a public import cannot creep back.
@Suite("Public imports of C modules")
struct PublicImportsTests {
    static var packageDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The C targets of Package.swift: directories of Sources/ with a module map or
    /// an `include/` directory, and no Swift file.
    static func cModules(in sources: URL) throws -> [String] {
        let manager = FileManager.default
        return try manager.contentsOfDirectory(atPath: sources.path).filter { name in
            let directory = sources.appendingPathComponent(name)
            let files = (try? manager.contentsOfDirectory(atPath: directory.path)) ?? []
            let isC = files.contains("module.modulemap") || files.contains("include")
            return isC && !files.contains { $0.hasSuffix(".swift") }
        }.sorted()
    }

    /// The lines of `text` that import one of `modules` publicly: `public import X`,
    /// `@_exported import X`, or either with an import kind (`public import struct X.Y`).
    static func publicImports(in text: String, of modules: Set<String>) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let importIndex = words.firstIndex(of: "import"), importIndex > 0 else { return nil }
            let modifiers = words[..<importIndex]
            guard modifiers.contains("public") || modifiers.contains("@_exported") else { return nil }
            let kinds: Set<Substring> = ["struct", "class", "enum", "protocol", "typealias", "func", "var", "let"]
            var target = importIndex + 1
            if target < words.count, kinds.contains(words[target]) { target += 1 }
            guard target < words.count else { return nil }
            let module = words[target].split(separator: ".").first.map(String.init) ?? ""
            return modules.contains(module) ? String(line) : nil
        }
    }

    @Test("the scan recognises a public import of a C module, and only that")
    func scanFindsPublicImports() {
        let modules: Set<String> = ["CProtobufC", "CSQLite"]
        let text = """
            public import CProtobufC
            @_exported import CSQLite
            public import struct CProtobufC.ProtobufCMessage
            package import CProtobufC
            import CSQLite
            public import LarderWire
            """
        #expect(Self.publicImports(in: text, of: modules) == [
            "public import CProtobufC", "@_exported import CSQLite", "public import struct CProtobufC.ProtobufCMessage",
        ])
    }

    @Test("no library module imports a C module publicly")
    func noPublicImportOfACModule() throws {
        let sources = Self.packageDirectory.appendingPathComponent("Sources")
        let cModules = try Self.cModules(in: sources)
        for expected in ["CProtobufC", "CLarderProto", "CSQLite", "CLibPQ", "COpenSSL", "CNghttp2", "CEpoll"] {
            #expect(cModules.contains(expected), "found the C module \(expected) in Sources/ (found \(cModules))")
        }
        let roots = ["Sources", "Fuzz/Sources", "Tests/LarderTestSupport", "Tests/LarderMemoryStore"]
        var offenders: [String] = []
        var files = 0
        for root in roots {
            let directory = Self.packageDirectory.appendingPathComponent(root)
            let enumerator = try #require(FileManager.default.enumerator(atPath: directory.path))
            for case let path as String in enumerator where path.hasSuffix(".swift") {
                files += 1
                let text = try String(contentsOf: directory.appendingPathComponent(path), encoding: .utf8)
                for line in Self.publicImports(in: text, of: Set(cModules)) {
                    offenders.append("\(root)/\(path): \(line)")
                }
            }
        }
        #expect(files > 300, "found the library sources (\(files) files)")
        #expect(offenders.isEmpty, "C types in public API; use `import` or `package import`: \(offenders)")
    }
}
