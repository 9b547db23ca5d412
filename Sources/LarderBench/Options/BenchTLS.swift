/// `--tls` and its settings: every connection of the run (the load's, the seeding's and the
/// clean-up's) does its own TLS handshake, verified like `larder --tls` does.
public struct BenchTLS: Sendable, Equatable {
    /// CA certificates (PEM) to verify the server against (`--ca`); nil = the system trust store.
    public var caFile: String?
    /// The name the server's certificate must match, and SNI (`--server-name`); nil = the `--server` host.
    public var serverName: String?
    /// Accept any server certificate (`--insecure-skip-verify`): never implied.
    public var insecureSkipVerify = false
    /// A client certificate and its key (PEM, `--cert`, `--key`), for servers that ask for one.
    public var certificateFile: String?
    public var keyFile: String?

    public init(caFile: String? = nil, serverName: String? = nil, insecureSkipVerify: Bool = false,
                certificateFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.serverName = serverName
        self.insecureSkipVerify = insecureSkipVerify
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }

    /// The flags that ask for these settings, e.g. `--tls --ca ca.pem` (paths quoted for a shell when needed).
    public var flags: String {
        var words = ["--tls"]
        if let caFile { words += ["--ca", Self.quoted(caFile)] }
        if let serverName { words += ["--server-name", Self.quoted(serverName)] }
        if insecureSkipVerify { words.append("--insecure-skip-verify") }
        if let certificateFile, let keyFile { words += ["--cert", Self.quoted(certificateFile), "--key", Self.quoted(keyFile)] }
        return words.joined(separator: " ")
    }

    private static func quoted(_ word: String) -> String {
        let plain = word.allSatisfy { $0.isLetter || $0.isNumber || "/._-+:@,=".contains($0) }
        return plain && !word.isEmpty ? word : "'" + word.map { $0 == "'" ? "'\\''" : String($0) }.joined() + "'"
    }
}
