#if canImport(Glibc)
import Glibc
#endif
import LarderTLS
import LarderWire

/// What one SIGHUP read from disk: the token file and the TLS files, each loaded or refused,
/// and whether others may read or change the secret ones. Read off the event loop (`read`), so a
/// file on a hung network mount holds the reading thread, not every connection; the loop then
/// puts the result in force (`Server.apply`).
struct SecretFiles: Sendable {
    /// The token file's tokens, or why it was refused; nil without `--auth-token-file`.
    var token: Result<BearerToken, RPCError>?
    /// What is unsafe about the token file (`exposure(of:)`), when it was loaded.
    var tokenExposure: String?
    /// The new TLS context, or why it was refused; nil without `--tls-cert`.
    var tls: Result<TLSServerContext?, RPCError>?
    /// What is unsafe about the TLS private key (`exposure(of:)`), when it was loaded.
    var keyExposure: String?

    /// Reads every file `configuration` names; `previousTLS` is the context in force, whose
    /// session ticket keys a new one adopts. Blocking: call it off the loop.
    static func read(_ configuration: ServerConfiguration, previousTLS: TLSServerContext?) -> SecretFiles {
        var files = SecretFiles()
        if let path = configuration.authTokenFile {
            files.token = Result { () throws(RPCError) in try BearerToken.load(path: path) }
            if case .success = files.token { files.tokenExposure = exposure(of: path) }
        }
        if configuration.tlsCertificateFile != nil {
            files.tls = Result { () throws(RPCError) in try Server.loadTLSContext(configuration, replacing: previousTLS) }
            if case .success = files.tls, let key = configuration.tlsKeyFile { files.keyExposure = exposure(of: key) }
        }
        return files
    }

    /// Why a secret file is unsafe: not a regular file, others may read it or change it, or its
    /// group may change it (`chmod 600`, or 640 with the server's group, as DEPLOY.md installs
    /// them). Nil when it is fine or cannot be looked at. Ownership is not checked: root may own them.
    static func exposure(of path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = info.st_mode & 0o7777
        if (info.st_mode & S_IFMT) != S_IFREG { return "is not a regular file" }
        guard mode & 0o004 != 0 || mode & 0o022 != 0 else { return nil }
        return "has mode \(String(mode, radix: 8)): "
            + (mode & 0o004 != 0 ? "every user can read it" : "users other than its owner can change it")
    }
}
