import CZlib

/// A `grpc-encoding` the server decompresses (gRPC's doc/compression.md).
enum GRPCMessageEncoding: String {
    /// RFC 1952 (a gzip header and trailer around deflate data).
    case gzip
    /// RFC 1950 (a zlib header and trailer around deflate data), as gRPC's own stacks send it;
    /// raw deflate data (RFC 1951, as some older stacks sent under this name) is taken too.
    case deflate

    /// `grpc-accept-encoding`: what a client may compress its messages with.
    static let acceptHeader = "identity,deflate,gzip"

    /// The encoding a `grpc-encoding` value names; content codings are case-insensitive
    /// (RFC 9110 §8.4.1), so `GZIP` is gzip.
    init?(name: String) {
        self.init(rawValue: name.lowercased())
    }

    /// Picks the encoding for a call's replies: the one its request was sent with (as grpc-go's
    /// servers do), when the client also accepts it (`grpc-accept-encoding`, or none sent).
    static func forReplies(requestEncoding: String?, acceptEncoding: String?) -> GRPCMessageEncoding? {
        guard let requestEncoding, let encoding = GRPCMessageEncoding(name: requestEncoding) else { return nil }
        guard let acceptEncoding else { return encoding }
        let accepted = acceptEncoding.split(separator: ",").contains {
            String($0.filter { $0 != " " && $0 != "\t" }).lowercased() == encoding.rawValue
        }
        return accepted ? encoding : nil
    }

    /// zlib's `windowBits` for compressing in this format, at the largest window (32 KiB).
    fileprivate var compressionWindowBits: Int32 {
        switch self {
        case .gzip: 15 + 16
        case .deflate: 15
        }
    }

    /// zlib's `windowBits` for data in this format that starts with `first` and `second`, at
    /// the largest window (32 KiB).
    fileprivate func windowBits(first: UInt8?, second: UInt8?) -> Int32 {
        switch self {
        case .gzip:
            return 15 + 16
        case .deflate:
            // A zlib header: method 8 (deflate) in the low nibble, the two bytes a multiple of 31.
            guard let first, let second, first & 0x0F == 8, (UInt16(first) << 8 | UInt16(second)) % 31 == 0 else {
                return -15  // raw deflate
            }
            return 15
        }
    }
}

/// Inflates compressed request messages, never to more than a limit, and deflates reply
/// messages, with zlib: the one place zlib's streams and pointers live. Each call owns its
/// `z_stream` and ends it.
enum GRPCMessageCompression {
    /// Why a compressed message was not decompressed.
    enum Failure: Error, Equatable {
        /// It inflates to more than `limit` bytes (inflating stopped there).
        case tooLarge(limit: Int)
        /// It is not valid compressed data in its format; zlib's reason.
        case corrupt(String)
        /// zlib could not allocate its state.
        case outOfMemory
    }

    /// Bytes inflated per step, on the stack.
    private static let chunkSize = 16 * 1024

    /// The bytes `compressed` inflates to, at most `limit` of them. Data after the end of
    /// the compressed stream is refused, as is a stream that ends early. `inflated` is set to
    /// the bytes zlib produced, whatever the outcome: the work done, to charge for it even when
    /// the message is refused (a bomb stops a little past `limit`, corrupt data where it breaks).
    static func inflate(_ compressed: [UInt8], encoding: GRPCMessageEncoding, limit: Int,
                        inflated: inout Int) throws(Failure) -> [UInt8] {
        inflated = 0
        var stream = z_stream()
        let windowBits = encoding.windowBits(first: compressed.first, second: compressed.dropFirst().first)
        switch larder_inflate_init(&stream, windowBits) {
        case Z_OK: break
        case Z_MEM_ERROR: throw .outOfMemory
        default: throw .corrupt("zlib could not start inflating")
        }
        defer { inflateEnd(&stream) }
        let result = compressed.withUnsafeBufferPointer { input in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: chunkSize) { chunk in
                inflate(&stream, input: input, chunk: chunk, limit: limit)
            }
        }
        inflated = Int(stream.total_out)
        return try result.get()
    }

    private static func inflate(_ stream: inout z_stream, input: UnsafeBufferPointer<UInt8>,
                                chunk: UnsafeMutableBufferPointer<UInt8>, limit: Int) -> Result<[UInt8], Failure> {
        // zlib takes `next_in` as mutable (without ZLIB_CONST) but never writes through it.
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.avail_in = UInt32(input.count)
        var output: [UInt8] = []
        while true {
            // Room for what the limit leaves and one byte more (to see it crossed), so a refused
            // message has made zlib produce at most `limit + 1` bytes, which is what is charged.
            let left = limit - output.count
            let room = left < chunk.count ? max(left, 0) + 1 : chunk.count
            stream.next_out = chunk.baseAddress
            stream.avail_out = UInt32(room)
            let status = CZlib.inflate(&stream, Z_NO_FLUSH)
            let produced = room - Int(stream.avail_out)
            guard produced <= limit - output.count else { return .failure(.tooLarge(limit: limit)) }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[..<produced]))
            switch status {
            case Z_STREAM_END:
                guard stream.avail_in == 0 else {
                    return .failure(.corrupt("\(stream.avail_in) bytes follow the end of the compressed data"))
                }
                return .success(output)
            case Z_OK:
                continue
            case Z_BUF_ERROR:
                // No progress is possible: all the input is consumed and the stream has not ended.
                return .failure(.corrupt("the compressed data ends early"))
            case Z_MEM_ERROR:
                return .failure(.outOfMemory)
            default:
                let reason = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                return .failure(.corrupt(reason))
            }
        }
    }
}

extension GRPCMessageCompression {
    /// Replies shorter than this go uncompressed (the Compressed-Flag is per message): below it
    /// the gzip header and trailer and the CPU outweigh what is saved.
    static let minimumReplySize = 1024

    /// `message` deflated in `encoding` at zlib's fastest level and framed as one gRPC message
    /// (the 5-byte prefix with the Compressed-Flag set); nil when that would not be smaller.
    static func framedDeflate(_ message: UnsafeRawBufferPointer, encoding: GRPCMessageEncoding) -> [UInt8]? {
        var stream = z_stream()
        guard larder_deflate_init(&stream, Z_BEST_SPEED, encoding.compressionWindowBits) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let prefixSize = GRPCMessageFraming.prefixSize
        let capacity = prefixSize + Int(deflateBound(&stream, UInt(message.count)))
        var complete = false
        let framed = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            guard let base = buffer.baseAddress, let source = message.baseAddress else { return }
            stream.next_in = UnsafeMutablePointer(mutating: source.assumingMemoryBound(to: UInt8.self))
            stream.avail_in = UInt32(message.count)
            stream.next_out = base + prefixSize
            stream.avail_out = UInt32(capacity - prefixSize)
            // deflateBound's room takes the whole message in one call.
            guard deflate(&stream, Z_FINISH) == Z_STREAM_END else { return }
            let length = Int(stream.total_out)
            guard length < message.count else { return }
            for (index, byte) in GRPCMessageDeframer.prefix(count: length, compressed: true).enumerated() {
                buffer[index] = byte
            }
            initialized = prefixSize + length
            complete = true
        }
        return complete ? framed : nil
    }
}
