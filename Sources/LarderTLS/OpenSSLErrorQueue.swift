import COpenSSL

/// OpenSSL's thread-local error queue, read and emptied in one place.
enum OpenSSLErrorQueue {
    /// One queued error: its reason code (`SSL_R_...`) and text.
    struct Entry {
        var reason: Int32
        var text: String
    }

    /// Empties the queue before an operation, so what follows it is its own.
    static func clear() { ERR_clear_error() }

    /// Takes every queued error, oldest first.
    static func take() -> [Entry] {
        var entries: [Entry] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            entries.append(Entry(reason: Int32(truncatingIfNeeded: larder_tls_err_reason(code)), text: text))
        }
        return entries
    }

    /// The queued errors as one line, for `TLSError.detail`.
    static func takeText() -> String { take().map(\.text).joined(separator: "; ") }
}
