import LarderWire
#if canImport(Glibc)
import Glibc
#endif

/// SIGHUP: reloading what can change without a restart (the bearer token file here; the
/// TLS certificate, key and client CA in `Server+TLS`).
extension Server {
    /// The signals `run()` reads: SIGINT and SIGTERM drain, SIGHUP reloads. `ServerMain`
    /// blocks them before any thread starts.
    public static let handledSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    static func signalName(_ number: Int32) -> String {
        switch number {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(number)"
        }
    }

    /// SIGHUP: reloads the token file and the TLS files the server was started with; when it
    /// has neither, logs `reload_skipped` (SIGHUP changes nothing) instead.
    func reload() {
        guard configuration.authTokenFile != nil || configuration.tlsCertificateFile != nil else {
            logger.info("reload_skipped", ["reason": "no --auth-token-file or --tls-cert to reload"])
            return
        }
        reloadToken()
        reloadTLS()
    }

    /// Reads `--auth-token-file` again (if there is one), on the loop: calls started from now
    /// on need the new token; calls already admitted are not affected. A file that cannot be
    /// read or holds no valid token keeps the old one, with an error line.
    func reloadToken() {
        guard let path = configuration.authTokenFile else { return }
        do {
            core.token = try BearerToken.load(path: path)
            logger.info("token_reloaded", ["path": path, "tokens": core.token?.count ?? 0])
            warnIfExposed(path, what: "auth token file")
        } catch {
            logger.error("token_reload_failed", ["path": path, "error": error.message, "kept": "previous token"])
        }
    }

    /// Warns when a secret file (the token file, the TLS key) is not a regular file, or others
    /// may read it or write it, or its group may write it: `chmod 600` (or 640 with the server's
    /// group, as DEPLOY.md installs them). Ownership is not checked: root may own them.
    func warnIfExposed(_ path: String, what: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        let mode = info.st_mode & 0o7777
        let problem: String
        if (info.st_mode & S_IFMT) != S_IFREG {
            problem = "is not a regular file"
        } else if mode & 0o004 != 0 || mode & 0o022 != 0 {
            problem = "has mode \(String(mode, radix: 8)): "
                + (mode & 0o004 != 0 ? "every user can read it" : "users other than its owner can change it")
        } else {
            return
        }
        logger.warn("secret_file_exposed", ["path": path, "file": what, "problem": problem,
                                            "fix": "chmod 600 (or 640 with the server's group)"])
    }
}
