#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LarderWire
import LarderSystem

/// IANA time zones by name, read from the system's tzdata (`/usr/share/zoneinfo`,
/// or `$TZDIR`) and kept once read.
///
/// Our own TZif reader rather than Foundation's `TimeZone`: on Linux that one is
/// built on ICU (about 30 MB of library and data in the server) and reads ICU's
/// own copy of the zone data rather than the system's; the TZif files are what the
/// system and `tzdata` updates keep current.
public final class TimeZoneDatabase: Sendable {
    /// The database of the system's tzdata.
    public static let system = TimeZoneDatabase(
        directory: getenv("TZDIR").map { String(cString: $0) } ?? "/usr/share/zoneinfo")

    /// Where the TZif files are.
    public let directory: String
    private let zones = LockedValue<[String: TimeZoneRules]>([:])
    /// No real TZif file is near this size (the largest are ~4 KB).
    private static let maxFileBytes = 256 * 1024

    public init(directory: String) {
        self.directory = directory
    }

    /// The rules of zone `name` (e.g. "America/New_York"); INVALID_ARGUMENT naming the
    /// field when it is not a zone name or no such zone is installed.
    func rules(named name: String, field: String) throws(RPCError) -> TimeZoneRules {
        guard Self.isZoneName(name) else {
            throw RPCError.invalidArgument(
                "\(field) must be an IANA time zone name such as \"Asia/Taipei\", got \(SafeText.quoted(name))")
        }
        if name.hasPrefix("right/") { throw Self.leapSecondZone(name, field: field) }
        if Self.filesThatAreNotZones.contains(name) {
            throw RPCError.invalidArgument(
                "\(field) \(SafeText.quoted(name)) is not an IANA time zone name; use one such as \"Europe/Paris\"")
        }
        if let cached = zones.withLock({ $0[name] }) { return cached }
        guard let bytes = Self.read(directory + "/" + name), let rules = TZifReader.rules(bytes) else {
            throw RPCError.invalidArgument(
                "\(field) \(SafeText.quoted(name)) is not a known time zone (none in \(directory)); use an IANA name such as \"Europe/Paris\"")
        }
        // A leap-second zone reached by another name (posix/right/UTC, or a TZDIR inside right/).
        guard !TZifReader.countsLeapSeconds(bytes) else { throw Self.leapSecondZone(name, field: field) }
        zones.withLock { $0[name] = rules }
        return rules
    }

    /// The refusal of a zone that counts leap seconds.
    private static func leapSecondZone(_ name: String, field: String) -> RPCError {
        RPCError.invalidArgument("\(field) \(SafeText.quoted(name)) counts leap seconds, which summaries do not; "
            + "use the zone without \"right/\"")
    }

    /// Files of the zone directory that name no zone: the host's own (`localtime`, whatever
    /// the server's machine is set to), a rules template, a placeholder.
    static let filesThatAreNotZones: Set<String> = ["localtime", "posixrules", "Factory", "posix/localtime",
                                                     "posix/posixrules", "posix/Factory"]

    /// A relative path of letters, digits and `_+-.`, no part `.`/`..`, at most 255 bytes.
    static func isZoneName(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard (1...255).contains(utf8.count), utf8.allSatisfy(isZoneCharacter) else { return false }
        return name.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { part in
            !part.isEmpty && part != "." && part != ".." && !part.hasPrefix("-")
        }
    }

    private static func isZoneCharacter(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "_"), UInt8(ascii: "+"),
             UInt8(ascii: "-"), UInt8(ascii: "."): true
        default: false
        }
    }

    /// The bytes of the regular file at `path`, or nil.
    private static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= maxFileBytes else {
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(fd, buffer.baseAddress.map { $0 + done }, buffer.count - done)
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }
}
