import Foundation
import Testing
import LarderTestSupport

/// DESIGN.md's rule for the server side: no Foundation (nor the ICU it brings) and no
/// Dispatch; its threads and waits are LarderSystem's. Checked in the sources and in
/// the linked binary, so a stray import cannot creep back in unnoticed.
@Suite("Server-side dependencies", .offThePool)
struct ServerDependenciesTests {
    static let serverModules = ["LarderServer", "LarderServerMain", "LarderReactor", "LarderStore",
                                "LarderSQLite", "LarderPostgres", "LarderSystem", "larder-server"]

    static var sourcesDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
    }

    @Test("no server-side source file imports Foundation or Dispatch")
    func sourcesImportNeither() throws {
        var offenders: [String] = []
        var files = 0
        for module in Self.serverModules {
            let directory = Self.sourcesDirectory.appendingPathComponent(module)
            let enumerator = try #require(FileManager.default.enumerator(atPath: directory.path))
            for case let path as String in enumerator where path.hasSuffix(".swift") {
                files += 1
                let text = try String(contentsOf: directory.appendingPathComponent(path), encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ")
                    guard let importIndex = words.firstIndex(of: "import"), importIndex + 1 < words.count else { continue }
                    let imported = words[importIndex + 1]
                    if imported == "Foundation" || imported == "Dispatch" || imported.hasPrefix("Foundation") {
                        offenders.append("\(module)/\(path): \(line)")
                    }
                }
            }
        }
        #expect(files > 50, "found the server's sources")
        #expect(offenders.isEmpty, "\(offenders)")
    }

    @Test("larder-server links neither Foundation nor ICU")
    func binaryLinksNeither() async throws {
        let server = try ServerProcess.binary("larder-server")
        let run = try await runProcess(URL(fileURLWithPath: "/usr/bin/ldd"), [server.path], environment: [:])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("libswiftCore"), "ldd listed the Swift runtime: \(run.stdout)")
        for library in ["libFoundation", "libicu", "lib_FoundationICU"] {
            #expect(!run.stdout.contains(library), "\(library) in:\n\(run.stdout)")
        }
    }
}
