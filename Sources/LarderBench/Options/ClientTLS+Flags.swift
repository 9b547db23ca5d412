public import LarderClient

/// `larder bench --tls` takes the same settings as `larder --tls` (`ClientTLS`); every connection
/// of a run (the load's, the seeding's and the clean-up's) does its own TLS handshake, verified
/// like the CLI's. The bench also prints them back, in the clean-up command it suggests.
extension ClientTLS {
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
