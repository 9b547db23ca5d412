import LarderTLS
public import LarderWire

/// TLS settings of a `LarderClient` connection: whom to trust and which name to check.
public struct ClientTLS: Sendable, Equatable {
    /// CA certificates (PEM) to verify the server against; nil = the system trust store.
    public var caFile: String?
    /// The name the server's certificate must match (and SNI); nil = the host connected to.
    public var serverName: String?
    /// Accept any certificate: anyone in the path can read and change the traffic. Never implied.
    public var insecureSkipVerify: Bool
    /// A client certificate and its key (PEM), for servers that ask for one (`--tls-client-ca`).
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

    /// Loads the files as a connection would, for a caller that reports their problems itself.
    /// - Throws: FAILED_PRECONDITION naming the file and what is wrong with it.
    public func checkFiles() throws(RPCError) { _ = try makeContext() }

    /// The context every connection of one client shares (offering ALPN `larder`).
    func makeContext() throws(RPCError) -> TLSClientContext {
        let verification: TLSClientContext.Verification = insecureSkipVerify ? .insecureSkipVerify
            : caFile.map { .caFile($0) } ?? .systemTrustStore
        do {
            return try TLSClientContext(verification: verification, protocols: ["larder"],
                                        certificateChainFile: certificateFile, privateKeyFile: keyFile)
        } catch {
            throw RPCError(error.code, error.message)
        }
    }
}
