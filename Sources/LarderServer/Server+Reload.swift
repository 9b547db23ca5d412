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
            logger.info("token_reloaded", ["path": path])
        } catch {
            logger.error("token_reload_failed", ["path": path, "error": error.message, "kept": "previous token"])
        }
    }
}
