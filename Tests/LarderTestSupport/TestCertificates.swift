public import Foundation

/// Certificates a test makes with the `openssl` CLI in a temporary directory, so nothing that
/// expires is committed: a CA, a server certificate it signed for `localhost` and 127.0.0.1,
/// an expired one, a client certificate, and a second CA that signed nothing here.
public struct TestCertificates: Sendable {
    public let directory: URL
    public var caCertificate: String { path("ca.pem") }
    public var otherCACertificate: String { path("other-ca.pem") }
    public var serverCertificate: String { path("server.pem") }
    public var serverKey: String { path("server.key") }
    public var expiredServerCertificate: String { path("expired.pem") }
    public var clientCertificate: String { path("client.pem") }
    public var clientKey: String { path("client.key") }
    /// A client certificate signed by the other CA (one the server does not trust).
    public var strangerCertificate: String { path("stranger.pem") }
    public var strangerKey: String { path("stranger.key") }

    /// The subject of `clientCertificate`, as the server reports it (RFC 2253).
    public static let clientSubject = "CN=larder-test-client,O=Larder Tests"

    public func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Makes the whole set in a new temporary directory (about a second of `openssl` runs).
    public static func make() throws -> TestCertificates {
        let certificates = TestCertificates(directory: try makeTemporaryDirectory(prefix: "larder-tls"))
        try certificates.makeAll()
        return certificates
    }

    private func makeAll() throws {
        try makeCA("ca", subject: "/CN=Larder Test CA")
        try makeCA("other-ca", subject: "/CN=Some Other CA")
        try makeSigned("server", key: "server", subject: "/CN=localhost", ca: "ca", days: 2,
                       extensions: "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        try makeSigned("expired", key: "server", subject: "/CN=localhost", ca: "ca", days: -1,
                       extensions: "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        try makeSigned("client", key: "client", subject: "/O=Larder Tests/CN=larder-test-client", ca: "ca", days: 2,
                       extensions: "extendedKeyUsage=clientAuth\n")
        try makeSigned("stranger", key: "stranger", subject: "/CN=stranger", ca: "other-ca", days: 2,
                       extensions: "extendedKeyUsage=clientAuth\n")
    }

    /// Writes a new certificate for the server's key (same subject, names and CA) to
    /// `<name>.pem` and returns its path: a renewal every client trusting `ca.pem` accepts.
    public func makeRenewedServerCertificate(named name: String) throws -> String {
        try makeSigned(name, key: "server", subject: "/CN=localhost", ca: "ca", days: 2,
                       extensions: "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        return path("\(name).pem")
    }

    /// Writes a certificate for the server's key (same subject and names) signed by the other
    /// CA to `<name>.pem`, and returns its path: a renewal a client trusting only `ca.pem` refuses.
    public func makeServerCertificateFromOtherCA(named name: String) throws -> String {
        try makeSigned(name, key: "server", subject: "/CN=localhost", ca: "other-ca", days: 2,
                       extensions: "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        return path("\(name).pem")
    }

    /// Writes a chain to `<name>.pem`, a certificate for the server's key (valid two days) and
    /// an intermediate CA that signed it and expired yesterday, and returns its path.
    public func makeChainWithExpiredIntermediate(named name: String) throws -> String {
        try makeSigned("\(name)-intermediate", key: "\(name)-intermediate", subject: "/CN=Expired Intermediate", ca: "ca",
                       days: -1, extensions: "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n")
        try makeSigned("\(name)-leaf", key: "server", subject: "/CN=localhost", ca: "\(name)-intermediate", days: 2,
                       extensions: "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        let chain = try String(contentsOfFile: path("\(name)-leaf.pem"), encoding: .utf8)
            + String(contentsOfFile: path("\(name)-intermediate.pem"), encoding: .utf8)
        try chain.write(toFile: path("\(name).pem"), atomically: true, encoding: .utf8)
        return path("\(name).pem")
    }

    /// Writes a client certificate for the client's key, signed by the CA, valid from a minute ago
    /// until `seconds` from now, to `<name>.pem`, and returns its path and its end.
    public func makeShortLivedClientCertificate(named name: String, seconds: Int) throws -> (path: String, notAfter: Date) {
        let directory = path("\(name)-ca")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "".write(toFile: "\(directory)/index.txt", atomically: true, encoding: .utf8)
        try String(format: "%08X\n", UInt32.random(in: 1...UInt32.max)).write(toFile: "\(directory)/serial", atomically: true,
                                                                              encoding: .utf8)
        try """
            [ca]
            default_ca = test
            [test]
            database = \(directory)/index.txt
            new_certs_dir = \(directory)
            serial = \(directory)/serial
            default_md = sha256
            policy = anything
            unique_subject = no
            [anything]
            commonName = supplied
            organizationName = optional
            [client]
            extendedKeyUsage = clientAuth

            """.write(toFile: "\(directory)/ca.cnf", atomically: true, encoding: .utf8)
        try openssl(["req", "-new", "-key", clientKey, "-out", path("\(name).csr"), "-subj", "/CN=larder-short-lived"])
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        // Whole seconds: the certificate's times have no fraction, so it ends on this one.
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let notAfter = now.addingTimeInterval(Double(seconds))
        try openssl(["ca", "-batch", "-notext", "-config", "\(directory)/ca.cnf", "-extensions", "client",
                     "-cert", caCertificate, "-keyfile", path("ca.key"), "-in", path("\(name).csr"), "-out", path("\(name).pem"),
                     "-startdate", formatter.string(from: now.addingTimeInterval(-60)), "-enddate", formatter.string(from: notAfter)])
        return (path("\(name).pem"), notAfter)
    }

    /// Writes the server's key encrypted with a passphrase to `<name>.key` and returns its path.
    public func makeEncryptedServerKey(named name: String) throws -> String {
        try openssl(["pkey", "-in", serverKey, "-aes256", "-passout", "pass:larder-test", "-out", path("\(name).key")])
        return path("\(name).key")
    }

    private func makeCA(_ name: String, subject: String) throws {
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                     "-keyout", path("\(name).key"), "-out", path("\(name).pem"), "-days", "2", "-subj", subject])
    }

    private func makeSigned(_ name: String, key: String, subject: String, ca: String, days: Int, extensions: String) throws {
        let keyPath = path("\(key).key")
        if !FileManager.default.fileExists(atPath: keyPath) {
            try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyPath])
        }
        try openssl(["req", "-new", "-key", keyPath, "-out", path("\(name).csr"), "-subj", subject])
        try extensions.write(toFile: path("\(name).ext"), atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", path("\(name).csr"), "-CA", path("\(ca).pem"), "-CAkey", path("\(ca).key"),
                     "-set_serial", "\(UInt32.random(in: 1...UInt32.max))", "-out", path("\(name).pem"),
                     "-days", "\(days)", "-extfile", path("\(name).ext")])
    }

    private func openssl(_ arguments: [String]) throws {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.exitStatus(waitingUpTo: 120) == 0 else {
            throw SupportError("openssl \(arguments.joined(separator: " ")) failed: \(text)")
        }
    }

    /// Removes the directory.
    public func remove() { try? FileManager.default.removeItem(at: directory) }
}
