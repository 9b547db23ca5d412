import LarderReactor
import LarderSystem
import LarderTLS
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

    /// SIGHUP: reads the token file and the TLS files the server was started with again, on a
    /// thread of its own, then puts them in force on the loop (`apply`); when it has neither,
    /// logs `reload_skipped` (SIGHUP changes nothing) instead. A SIGHUP while a reload still
    /// reads runs one more reload after it, so the last signal always sees the files' last state.
    func reload() {
        guard configuration.authTokenFile != nil || configuration.tlsCertificateFile != nil else {
            logger.info("reload_skipped", ["reason": "no --auth-token-file or --tls-cert to reload"])
            return
        }
        switch reloadState {
        case .idle: break
        case .reading, .readingThenAgain:
            reloadState = .readingThenAgain
            logger.info("reload_pending", ["reason": "the last reload is still reading its files; another follows it"])
            return
        }
        reloadState = .reading
        let configuration = configuration, previousTLS = tlsContext, read = secretFilesReader
        // A file on a hung network mount holds this thread, never the loop: every connection is
        // served meanwhile, with the files in force before the signal.
        let thread = SystemThread(startingIfPossible: "larder-reload") { [self] in
            let files = read(configuration, previousTLS)
            loop.execute { [self] in apply(files) }
        }
        if thread == nil {
            reloadState = .idle
            logger.error("reload_failed", ["reason": "no thread to read the files (the process or user thread limit)",
                                           "kept": "what is in force; send SIGHUP again"])
        }
    }

    /// On the loop: puts what a reload read in force. Calls started from now on need the new
    /// token and new TLS connections get the new certificate; calls and connections already
    /// admitted are not affected. A file that cannot be read or is refused keeps what was in
    /// force, with an error line.
    func apply(_ files: SecretFiles) {
        let again = reloadState == .readingThenAgain
        reloadState = .idle
        if let path = configuration.authTokenFile, let token = files.token {
            switch token {
            case .success(let token):
                core.token = token
                logger.info("token_reloaded", ["path": path, "tokens": token.count])
                logShortToken(token, path: path)
            case .failure(let error):
                logger.error("token_reload_failed", ["path": path, "error": error.message, "kept": "previous token"])
            }
            logExposure(files.tokenExposure, path: path, file: "auth token file")
        }
        if let certificate = configuration.tlsCertificateFile, let tls = files.tls {
            switch tls {
            case .success(let context):
                if let refusal = unusableReplacement(context) {
                    logger.error("tls_reload_failed", ["cert": certificate, "error": refusal, "kept": "previous certificate"])
                    break
                }
                tlsContext = context
                logCertificateValidity(loaded: true)
                if let key = configuration.tlsKeyFile { logExposure(files.keyExposure, path: key, file: "TLS private key") }
                logger.info("tls_reloaded", ["cert": certificate])  // last: the reload is done
            case .failure(let error):
                logger.error("tls_reload_failed", ["cert": certificate, "error": error.message,
                                                   "kept": "previous certificate"])
            }
        }
        if again { reload() }
    }

    /// Why a reloaded certificate that has expired, or is not valid yet, must not replace one
    /// that is in its validity period (every verifying client would fail: almost always a wrong
    /// file copied into place; audit 36 L2); nil when it may. At start, and once the certificate
    /// in force is out of its period too, such a certificate is served with a warning instead.
    func unusableReplacement(_ context: TLSServerContext?) -> String? {
        guard let new = context?.certificateValidity, let old = tlsContext?.certificateValidity else { return nil }
        let now = Int64(time(nil))
        let usable: Set<TLSCertificateValidity.State> = [.valid, .expiringSoon]
        let state = new.state(at: now)
        guard usable.contains(old.state(at: now)), !usable.contains(state) else { return nil }
        let when = state == .expired ? "expired at \(Logger.timestamp(seconds: new.notAfter))"
            : "is valid only from \(Logger.timestamp(seconds: new.notBefore))"
        return "the new certificate (\(new.subject)) \(when), and the one in force is valid: install a current certificate"
    }

    /// Warns when a token is shorter than `BearerToken.recommendedMinimumBytes` (it is still accepted).
    func logShortToken(_ token: BearerToken, path: String) {
        guard token.shortestBytes < BearerToken.recommendedMinimumBytes else { return }
        logger.warn("token_short", ["path": path, "bytes": token.shortestBytes,
                                    "fix": "use \(BearerToken.recommendedMinimumBytes) or more random characters, "
                                        + "e.g. openssl rand -hex 32"])
    }

    /// Warns that a secret file is not a regular file, or others may read or change it
    /// (`problem`, from `SecretFiles.exposure(of:)`); nothing when `problem` is nil.
    func logExposure(_ problem: String?, path: String, file: String) {
        guard let problem else { return }
        logger.warn("secret_file_exposed", ["path": path, "file": file, "problem": problem,
                                            "fix": "chmod 600 (or 640 with the server's group)"])
    }
}

/// Where SIGHUP's reload stands; owned by the loop.
enum ReloadState: Equatable {
    case idle
    /// A thread reads the files.
    case reading
    /// A thread reads the files, and another SIGHUP came meanwhile: read them once more after.
    case readingThenAgain
}
