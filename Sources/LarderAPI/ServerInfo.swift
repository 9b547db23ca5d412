import CLarderProto
import CProtobufC
import LarderWire

/// `larder.admin.v1.GetServerInfoRequest`.
public struct GetServerInfoRequest: Hashable, Sendable, ProtoMessage {
    public init() {}

    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__admin__v1__get_server_info_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {}

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        arena.message(Larder__Admin__V1__GetServerInfoRequest.self) {
            larder__admin__v1__get_server_info_request__init($0)
        }.asMessage
    }
}

/// `larder.admin.v1.ServerInfo`: which build of larder-server answers, and since when it runs.
public struct ServerInfo: Hashable, Sendable {
    /// The release, e.g. `0.1.0`.
    public var version: String
    /// The git commit of the build, or `unknown`.
    public var commit: String
    /// The wire protocol, e.g. `larder.rpc.v1`.
    public var protocolVersion: String
    public var startTime: Timestamp?

    public init(version: String = "", commit: String = "", protocolVersion: String = "", startTime: Timestamp? = nil) {
        self.version = version
        self.commit = commit
        self.protocolVersion = protocolVersion
        self.startTime = startTime
    }

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

extension ServerInfo: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__admin__v1__server_info__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__Admin__V1__ServerInfo.self).pointee
        self.init(version: try CFields.string(c.version, field: "version"),
                  commit: try CFields.string(c.commit, field: "commit"),
                  protocolVersion: try CFields.string(c.protocol_version, field: "protocol_version"),
                  startTime: Timestamp?(c: c.start_time))
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__Admin__V1__ServerInfo.self) { larder__admin__v1__server_info__init($0) }
        c.pointee.version = arena.string(version)
        c.pointee.commit = arena.string(commit)
        c.pointee.protocol_version = arena.string(protocolVersion)
        c.pointee.start_time = startTime.buildC(in: arena)
        return c.asMessage
    }
}
