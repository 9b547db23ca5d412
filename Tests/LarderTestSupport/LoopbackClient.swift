public import LarderClient

extension LarderClient {
    /// A client of the server on 127.0.0.1:`port`, sending `token` as its bearer token
    /// when given, with a timeout generous for a loaded machine.
    public static func loopback(port: UInt16, token: String? = nil,
                                timeout: Duration = .seconds(300)) throws -> LarderClient {
        var options = ClientOptions(defaultTimeout: timeout)
        if let token { options.setBearerToken(token) }
        return try LarderClient(server: ServerAddress(host: "127.0.0.1", port: port), options: options)
    }
}
