import LarderWire

extension ServerInfo {
    /// This process's own build (`BuildInfo`), started at `startTime`.
    public static func thisBuild(startTime: Timestamp? = nil) -> ServerInfo {
        ServerInfo(version: BuildInfo.version, commit: BuildInfo.commit, protocolVersion: BuildInfo.protocolVersion,
                   startTime: startTime)
    }

    /// `0.1.0 (commit 1a2b3c4d5e6f, protocol larder.rpc.v1)`.
    public var summary: String {
        BuildInfo.describe(version: version, commit: commit, protocolVersion: protocolVersion)
    }
}
