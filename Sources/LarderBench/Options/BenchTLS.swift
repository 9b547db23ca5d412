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
}
