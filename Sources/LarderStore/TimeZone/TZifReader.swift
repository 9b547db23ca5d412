/// Reads a TZif file (RFC 8536, versions 1-4) into `TimeZoneRules`.
///
/// Only what a UTC offset needs: the transition times, the offset of each
/// local time type, and the footer's POSIX rule. Version 2+ files are read
/// from their 64-bit section.
enum TZifReader {
    /// The rules in `bytes`, or nil when they are not a TZif file.
    static func rules(_ bytes: [UInt8]) -> TimeZoneRules? {
        guard let first = Header(bytes, at: 0) else { return nil }
        guard first.version >= 2 else {
            return body(bytes, header: first, at: Header.size, timeSize: 4).map {
                TimeZoneRules(transitions: $0.transitions, initialOffset: $0.initial, footer: nil)
            }
        }
        let secondStart = Header.size + first.bodySize(timeSize: 4)
        guard let second = Header(bytes, at: secondStart),
              let parsed = body(bytes, header: second, at: secondStart + Header.size, timeSize: 8) else { return nil }
        // The footer: "\n" TZ string "\n" after the 64-bit body.
        let footerStart = secondStart + Header.size + second.bodySize(timeSize: 8)
        var footer: POSIXTimeZoneRule?
        if footerStart < bytes.count, bytes[footerStart] == UInt8(ascii: "\n"),
           let close = bytes[(footerStart + 1)...].firstIndex(of: UInt8(ascii: "\n")), close > footerStart + 1 {
            footer = POSIXTimeZoneRule(String(decoding: bytes[(footerStart + 1)..<close], as: UTF8.self))
            if footer == nil { return nil }
        }
        return TimeZoneRules(transitions: parsed.transitions, initialOffset: parsed.initial, footer: footer)
    }

    /// Whether `bytes` is a TZif file that lists leap seconds (the `right/…` zones, under
    /// whatever name they are reached), which `rules` would ignore.
    static func countsLeapSeconds(_ bytes: [UInt8]) -> Bool {
        (Header(bytes, at: 0)?.leapCount ?? 0) > 0
    }

    private struct Header {
        static let size = 44
        let version: Int
        let isUTCount, isStdCount, leapCount, timeCount, typeCount, charCount: Int

        init?(_ bytes: [UInt8], at offset: Int) {
            guard offset >= 0, bytes.count >= offset + Self.size,
                  bytes[offset..<offset + 4].elementsEqual("TZif".utf8) else { return nil }
            let v = bytes[offset + 4]
            version = v == 0 ? 1 : Int(v) - Int(UInt8(ascii: "0"))
            guard (1...9).contains(version) else { return nil }
            func count(_ i: Int) -> Int { Int(TZifReader.uint32(bytes, at: offset + 20 + 4 * i)) }
            (isUTCount, isStdCount, leapCount, timeCount, typeCount, charCount) =
                (count(0), count(1), count(2), count(3), count(4), count(5))
            guard typeCount >= 1, timeCount <= 100_000, typeCount <= 256, leapCount <= 100_000,
                  charCount <= 100_000, isUTCount <= 256, isStdCount <= 256 else { return nil }
        }

        func bodySize(timeSize: Int) -> Int {
            timeCount * timeSize + timeCount + typeCount * 6 + charCount + leapCount * (timeSize + 4)
                + isStdCount + isUTCount
        }
    }

    private static func body(_ bytes: [UInt8], header: Header, at start: Int, timeSize: Int)
        -> (transitions: [(at: Int64, offset: Int64)], initial: Int64)?
    {
        guard bytes.count >= start + header.bodySize(timeSize: timeSize) else { return nil }
        let indexStart = start + header.timeCount * timeSize
        let typeStart = indexStart + header.timeCount
        var offsets: [Int64] = []
        for type in 0..<header.typeCount {
            offsets.append(Int64(Int32(bitPattern: uint32(bytes, at: typeStart + 6 * type))))
        }
        var transitions: [(at: Int64, offset: Int64)] = []
        transitions.reserveCapacity(header.timeCount)
        for i in 0..<header.timeCount {
            let at = timeSize == 8
                ? Int64(bitPattern: UInt64(uint32(bytes, at: start + 8 * i)) << 32 | UInt64(uint32(bytes, at: start + 8 * i + 4)))
                : Int64(Int32(bitPattern: uint32(bytes, at: start + 4 * i)))
            let type = Int(bytes[indexStart + i])
            guard type < offsets.count, transitions.last.map({ $0.at < at }) ?? true else { return nil }
            transitions.append((at, offsets[type]))
        }
        // RFC 8536: local time type 0 is in force before the first transition.
        return (transitions, offsets[0])
    }

    private static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
