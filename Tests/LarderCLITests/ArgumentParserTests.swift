import Foundation
import LarderCLI
import LarderClient
import LarderTestSupport
import Testing

@Suite("ArgumentParser", .offThePool)
struct ArgumentParserTests {
    let parser = ArgumentParser(catalog: .larder)

    /// Files for the TLS flags that larder accepts (it refuses a --ca, --cert or --key it cannot
    /// read or that holds no usable PEM): every .pem is one client certificate (good as a CA
    /// file too), every .key its key, so any pair matches.
    static let tlsFiles: String = {
        let certificates = try? TestCertificates.make()
        let certificate = certificates.flatMap { FileManager.default.contents(atPath: $0.clientCertificate) }
        let key = certificates.flatMap { FileManager.default.contents(atPath: $0.clientKey) }
        if let certificates { removeAtExit(certificates.directory) }
        let directory = certificates?.directory.path ?? FileManager.default.temporaryDirectory.path
        for name in ["ca.pem", "env.pem", "flag.pem", "me.pem"] {
            _ = FileManager.default.createFile(atPath: directory + "/" + name, contents: certificate)
        }
        for name in ["me.key", "env.key", "flag.key"] {
            _ = FileManager.default.createFile(atPath: directory + "/" + name, contents: key)
        }
        return directory
    }()

    static func file(_ name: String) -> String { tlsFiles + "/" + name }

    func command(_ arguments: [String], environment: [String: String] = [:]) throws -> (ParsedCommand, GlobalOptions) {
        guard case .run(let command, let globals) = try parser.parse(arguments, environment: environment) else {
            throw ParseTestFailure.notACommand(arguments)
        }
        return (command, globals)
    }

    @Test("flags named after fields and a positional id")
    func flagsAndPositional() throws {
        let (add, _) = try command(["meals", "add", "--name", "Oatmeal", "--calories", "350", "--category",
                                    "breakfast", "--at=2026-11-30T08:00:00+08:00"])
        #expect(add.spec.path == "meals add")
        #expect(add.positionals == [])
        #expect(add.values == ["name": "Oatmeal", "calories": "350", "category": "breakfast",
                               "at": "2026-11-30T08:00:00+08:00"])

        let (delete, _) = try command(["groups", "delete", "abc", "--cascade"])
        #expect(delete.spec.path == "groups delete")
        #expect(delete.positionals == ["abc"])
        #expect(delete.flags == ["cascade"])

        let (update, _) = try command(["locations", "update", "--color", "#112233", "id-1"])
        #expect(update.positionals == ["id-1"])
        #expect(update.values == ["color": "#112233"])
    }

    @Test("a value that looks like an option is taken as the value unless it is one of larder's; -- ends options")
    func valuesAndDoubleDash() throws {
        let (add, _) = try command(["meals", "add", "--name=--json", "--calories", "-5", "--category", "lunch"])
        #expect(add.values["name"] == "--json")
        #expect(add.values["calories"] == "-5")
        let (other, _) = try command(["meals", "add", "--name", "--not-an-option", "--calories", "1", "--category", "lunch"])
        #expect(other.values["name"] == "--not-an-option")
        let (get, globals) = try command(["meals", "get", "--", "-odd-id"])
        #expect(get.positionals == ["-odd-id"])
        #expect(globals.json == false)
    }

    @Test("a value flag followed by one of larder's own flags is a usage error naming both", arguments: [
        (["locations", "add", "--color", "#000000", "--name", "--json"], "--name needs a value (got the flag --json; write --name=--json to mean that text)"),
        (["locations", "add", "--name", "--color=#000000"], "--name needs a value (got the flag --color=#000000; write --name=--color=#000000 to mean that text)"),
        (["locations", "list", "--server", "--wide"], "--server needs a value (got the flag --wide; write --server=--wide to mean that text)"),
        (["locations", "add", "--name", "-o"], "--name needs a value (got the flag -o; write --name=-o to mean that text)"),
        (["locations", "add", "--name", "-H", "--color", "#000000"], "--name needs a value (got the flag -H; write --name=-H to mean that text)"),
        (["call", "/a.B/C", "-d", "--help-me", "--json"], nil),
        (["call", "/a.B/C", "-d", "--emit-defaults"], "-d needs a value (got the flag --emit-defaults; write --data=--emit-defaults to mean that text)"),
    ])
    func valueFlagBeforeAFlag(arguments: [String], message: String?) throws {
        guard let message else {
            let (call, _) = try command(arguments)
            #expect(call.values["data"] == "--help-me", "an unknown --word is still a value")
            return
        }
        #expect(throws: CLIError.usage(message, command: arguments[0] == "call" ? "larder call" : "larder \(arguments[0]) \(arguments[1])")) {
            try parser.parse(arguments)
        }
    }

    @Test("global options anywhere", arguments: [
        ["--json", "--server", "10.0.0.1:9000", "--timeout", "2.5", "--token", "t", "locations", "get", "ID"],
        ["locations", "--json", "--server=10.0.0.1:9000", "get", "--timeout", "2.5", "ID", "--token", "t"],
        ["locations", "get", "ID", "--token=t", "--timeout=2.5", "--server", "10.0.0.1:9000", "--json"],
    ])
    func globalsAnywhere(arguments: [String]) throws {
        let (get, globals) = try command(arguments)
        #expect(get.spec.path == "locations get")
        #expect(get.positionals == ["ID"])
        #expect(get.values.isEmpty)
        #expect(globals.json)
        #expect(globals.server == ServerAddress(host: "10.0.0.1", port: 9000))
        #expect(globals.timeout == .milliseconds(2500))
        #expect(globals.token == "t")
    }

    @Test("defaults, environment, and flags over environment")
    func environment() throws {
        let (_, defaults) = try command(["health"])
        #expect(defaults.server == ServerAddress(host: "127.0.0.1", port: 7411))
        #expect(defaults.timeout == .seconds(10))
        #expect(defaults.token == nil)
        #expect(!defaults.json)

        let environment = ["LARDER_SERVER": "[::1]:8000", "LARDER_TOKEN": "from-env"]
        let (_, fromEnvironment) = try command(["health"], environment: environment)
        #expect(fromEnvironment.server == ServerAddress(host: "::1", port: 8000))
        #expect(fromEnvironment.token == "from-env")

        let (_, overridden) = try command(["health", "--server", "h:1", "--token", "flag"], environment: environment)
        #expect(overridden.server == ServerAddress(host: "h", port: 1))
        #expect(overridden.token == "flag")
    }

    @Test("TLS: --tls with its settings, from flags or the environment; never implied")
    func tls() throws {
        #expect(try command(["health"]).1.tls == nil)
        #expect(try command(["health", "--tls"]).1.tls == ClientTLS())
        let (_, flags) = try command(["--tls", "health", "--ca", Self.file("ca.pem"), "--server-name", "larder.example.com"])
        #expect(flags.tls == ClientTLS(caFile: Self.file("ca.pem"), serverName: "larder.example.com"))
        let environment = ["LARDER_TLS": "1", "LARDER_CA": Self.file("env.pem"), "LARDER_SERVER_NAME": "env.example",
                           "LARDER_INSECURE_SKIP_VERIFY": "true"]
        let (_, fromEnvironment) = try command(["health"], environment: environment)
        #expect(fromEnvironment.tls == ClientTLS(caFile: Self.file("env.pem"), serverName: "env.example", insecureSkipVerify: true))
        let (_, overridden) = try command(["health", "--ca", Self.file("flag.pem")], environment: environment)
        #expect(overridden.tls?.caFile == Self.file("flag.pem"))
        // LARDER_CA alone (a shell profile) does not turn TLS on, and is no error.
        #expect(try command(["health"], environment: ["LARDER_CA": Self.file("env.pem")]).1.tls == nil)
        #expect(try command(["health"], environment: ["LARDER_TLS": "0"]).1.tls == nil)
    }

    @Test("TLS: a client certificate from --cert and --key, or LARDER_CERT and LARDER_KEY")
    func clientCertificate() throws {
        let (_, flags) = try command(["--tls", "--cert", Self.file("me.pem"), "--key", Self.file("me.key"), "health"])
        #expect(flags.tls == ClientTLS(certificateFile: Self.file("me.pem"), keyFile: Self.file("me.key")))
        let environment = ["LARDER_TLS": "1", "LARDER_CERT": Self.file("env.pem"), "LARDER_KEY": Self.file("env.key")]
        #expect(try command(["health"], environment: environment).1.tls == ClientTLS(certificateFile: Self.file("env.pem"), keyFile: Self.file("env.key")))
        #expect(try command(["health", "--key", Self.file("flag.key")], environment: environment).1.tls?.keyFile == Self.file("flag.key"))
        #expect(try command(["health"], environment: ["LARDER_CERT": Self.file("env.pem")]).1.tls == nil)
    }

    @Test("mistakes are usage errors naming the problem", arguments: [
        (["frob"], "unknown command 'frob'", "larder"),
        ([], "missing command", "larder"),
        (["meals"], "missing command for 'larder meals'", "larder meals"),
        (["meals", "eat"], "unknown command 'eat' for 'larder meals'", "larder meals"),
        (["meals", "get"], "missing ID", "larder meals get"),
        (["meals", "get", "a", "b"], "unexpected argument 'b'", "larder meals get"),
        (["meals", "list", "--bogus"], "unknown option '--bogus' for 'larder meals list'", "larder meals list"),
        (["--bogus", "meals", "list"], "unknown option '--bogus'", "larder"),
        (["meals", "add", "--name"], "--name needs a value", "larder meals add"),
        (["meals", "add", "--name", "a", "--name", "b"], "--name given more than once", "larder meals add"),
        (["meals", "add", "--name", "a", "--calories", "1"], "missing --category CATEGORY", "larder meals add"),
        (["groups", "delete", "x", "--cascade=yes"], "--cascade takes no value", "larder groups delete"),
        (["health", "--timeout", "0"], "--timeout must be a duration above 0", "larder health"),
        (["health", "--timeout", "soon"], "--timeout must be a duration above 0", "larder health"),
        (["health", "--server", "nohost"], "--server: server address \"nohost\" has no port", "larder health"),
        (["health", "--token", ""], "--token must not be empty", "larder health"),
        (["--", "health"], "missing command before 'health'", "larder"),
        (["health", "--ca", "ca.pem"], "--ca applies to TLS connections: add --tls", "larder health"),
        (["health", "--insecure-skip-verify"], "--insecure-skip-verify applies to TLS connections: add --tls",
         "larder health"),
        (["health", "--cert", "me.pem"], "--cert applies to TLS connections: add --tls", "larder health"),
        (["--tls", "health", "--cert", "me.pem"], "a client certificate needs both --cert FILE and --key FILE",
         "larder health"),
        (["--tls", "health", "--key", ""], "--key must not be empty", "larder health"),
    ])
    func usageErrors(arguments: [String], message: String, usage: String) {
        #expect {
            _ = try parser.parse(arguments)
        } throws: { error in
            guard case .usage(let text, let command) = error as? CLIError else { return false }
            return text.hasPrefix(message) && command == usage
        }
    }

    @Test("--help and -h at every level, even after a mistake", arguments: [
        (["--help"], HelpTopic.top),
        (["-h"], .top),
        (["help"], .top),
        (["meals", "--help"], .resource("meals")),
        (["help", "meals"], .resource("meals")),
        (["meals", "add", "-h"], .command("meals add")),
        (["--help", "meals", "add"], .command("meals add")),
        (["help", "meals", "add"], .command("meals add")),
        (["meals", "add", "--bogus", "--help"], .command("meals add")),
        (["health", "--help"], .command("health")),
    ])
    func help(arguments: [String], topic: HelpTopic) throws {
        guard case .help(let parsed) = try parser.parse(arguments) else {
            Issue.record("expected help for \(arguments)")
            return
        }
        #expect(parsed == topic)
    }

    @Test("bench gets the words after it and the global options before it")
    func bench() throws {
        let outcome = try parser.parse(["--server", "h:9", "bench", "--connections", "10", "--json"],
                                       environment: ["LARDER_TOKEN": "tok"])
        guard case .bench(let arguments, _, let serverText, let token) = outcome else {
            Issue.record("expected bench, got \(outcome)")
            return
        }
        #expect(arguments == ["--connections", "10", "--json"])
        #expect(serverText == "h:9")
        #expect(token == "tok")

        guard case .bench(let helpArguments, _, _, _) = try parser.parse(["-h", "bench"]) else {
            Issue.record("expected bench")
            return
        }
        #expect(helpArguments == ["--help"])
    }

    @Test("TLS flags before bench reach it as its own; it checks them itself")
    func benchOverTLS() throws {
        let outcome = try parser.parse(["--tls", "--ca", "ca.pem", "--server-name", "db.example", "bench", "--workload", "get"])
        guard case .bench(let arguments, _, _, _) = outcome else {
            Issue.record("expected bench, got \(outcome)")
            return
        }
        #expect(arguments == ["--tls", "--ca", "ca.pem", "--server-name", "db.example", "--workload", "get"])
        guard case .bench(let later, _, _, _) = try parser.parse(["--ca", "ca.pem", "bench", "--tls"]) else {
            Issue.record("expected bench")
            return
        }
        #expect(later == ["--ca", "ca.pem", "--tls"])
    }

    @Test("--timeout and -H before bench reach it as --connect-timeout and -m")
    func benchTimeoutAndHeaders() throws {
        let outcome = try parser.parse(["--timeout", "30s", "-H", "X-Tenant: a", "--header", "x-b:c", "bench", "-m", "k: v"],
                                       environment: ["LARDER_TIMEOUT": "2s"])
        guard case .bench(let arguments, _, _, _) = outcome else {
            Issue.record("expected bench, got \(outcome)")
            return
        }
        #expect(arguments == ["--connect-timeout", "30s", "-m", "x-tenant: a", "-m", "x-b: c", "-m", "k: v"])
        // From the environment alone, bench reads LARDER_TIMEOUT itself.
        guard case .bench(let plain, _, _, _) = try parser.parse(["bench"], environment: ["LARDER_TIMEOUT": "2s"]) else {
            Issue.record("expected bench")
            return
        }
        #expect(plain.isEmpty)
    }

    @Test("after bench, -o with a format's name is a usage error, not a file named json; -o ids before it too")
    func benchOutputFormats() throws {
        for words in [["bench", "-o", "ids"], ["bench", "--output", "json"], ["bench", "--output=table"], ["-o", "ids", "bench"]] {
            #expect(throws: CLIError.self, "\(words)") { try parser.parse(words) }
        }
        guard case .bench(let arguments, _, _, _) = try parser.parse(["bench", "-o", "./json", "--format", "json"]) else {
            Issue.record("expected bench")
            return
        }
        #expect(arguments == ["-o", "./json", "--format", "json"])
    }

    @Test("a --ca, --cert or --key file larder cannot read is a usage error naming it, from a flag or the environment")
    func unreadableTLSFiles() throws {
        let missing = "/nonexistent/larder-test.pem"
        for (words, environment, source) in [
            (["--tls", "--ca", missing, "health"], [String: String](), "--ca"),
            (["--tls", "--cert", missing, "--key", missing, "health"], [:], "--cert"),
            (["health"], ["LARDER_TLS": "1", "LARDER_CA": missing], "LARDER_CA"),
        ] {
            if let message = usageMessage(words, environment: environment) {
                #expect(message == "\(source) \(missing): cannot read the file (No such file or directory)")
            }
        }
        // Readable but no PEM: also larder's own check (exit 2), not a status as if from a server (19).
        let notPEM = FileManager.default.temporaryDirectory.appendingPathComponent("larder-not-pem-\(UInt64.random(in: 0 ... .max))").path
        try "not a certificate\n".write(toFile: notPEM, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: notPEM) }
        for words in [["--tls", "--ca", notPEM, "health"], ["--tls", "--cert", notPEM, "--key", notPEM, "health"]] {
            if let message = usageMessage(words) {
                #expect(message.contains(notPEM) && message.contains("PEM"), "\(message)")
            }
        }
    }

    /// The message of the usage error parsing `words` gives; nil, with an issue recorded, when
    /// it parses or fails otherwise.
    func usageMessage(_ words: [String], environment: [String: String] = [:]) -> String? {
        do {
            _ = try parser.parse(words, environment: environment)
            Issue.record("\(words) parsed")
        } catch {
            guard case .usage(let message, _) = error else {
                Issue.record("not a usage error: \(error)")
                return nil
            }
            return message
        }
        return nil
    }

    /// `--token-file <(…)` read "cannot read the file (Success)" (audit 27 M1).
    @Test("--token-file reads a pipe; an empty file or a directory is a clear usage error")
    func tokenFileFromAPipe() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let token = Array("from a pipe\n".utf8)
        _ = token.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }  // fits in the pipe's buffer
        close(ends[1])
        defer { close(ends[0]) }
        let (_, globals) = try command(["--token-file", "/dev/fd/\(ends[0])", "health"])
        #expect(globals.token == "from a pipe")
        for (path, why) in [("/dev/null", "the file is empty"), ("/tmp", "cannot read the file (Is a directory)")] {
            if let message = usageMessage(["--token-file", path, "health"]) {
                #expect(message == "--token-file \(path): \(why)")
            }
        }
    }

    @Test("--token-file after bench is read into bench's --token")
    func benchTokenFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("larder-token-\(UInt64.random(in: 0 ... .max))").path
        try "s3cret\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        for words in [["bench", "--token-file", path, "--workload", "get"], ["bench", "--token-file=\(path)", "--workload", "get"]] {
            guard case .bench(let arguments, _, _, _) = try parser.parse(words) else {
                Issue.record("expected bench")
                return
            }
            #expect(arguments == ["--token", "s3cret", "--workload", "get"])
        }
        #expect(throws: CLIError.self) { try parser.parse(["bench", "--token-file", path + ".missing"]) }
    }
}

enum ParseTestFailure: Error {
    case notACommand([String])
}
