import CLarderBuildInfo

/// What this build of Larder is: the one place its version is written, the
/// commit the build recorded, and the wire protocol it speaks.
public enum BuildInfo {
    /// The release of the server, the CLI and the client library (they ship together).
    public static let version = "0.1.0"

    /// The git commit the binaries were built from (12 hex digits, `-dirty` when the
    /// tree had changes), or `unknown` when the build did not record it.
    public static let commit = String(cString: larder_build_commit())

    /// The wire protocol: the package of the envelopes, `larder.rpc.v1`, read from the
    /// generated descriptor so it cannot drift from proto/.
    public static let protocolVersion = RequestEnvelope.descriptor.packageName

    /// `0.1.0 (commit 1a2b3c4d5e6f, protocol larder.rpc.v1)`.
    public static var summary: String { describe(version: version, commit: commit, protocolVersion: protocolVersion) }

    /// The `summary` form for any build's three facts (e.g. a server's, as it reports them).
    public static func describe(version: String, commit: String, protocolVersion: String) -> String {
        "\(version) (commit \(commit), protocol \(protocolVersion))"
    }
}
