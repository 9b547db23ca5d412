import CLarderProto
import CProtobufC
import LarderWire

/// `grpc.health.v1.HealthCheckRequest`.
public struct HealthCheckRequest: Hashable, Sendable {
    /// Empty = the whole server; otherwise a full service name such as `larder.v1.LocationService`.
    public var service: String
    public init(service: String = "") { self.service = service }
}

extension HealthCheckRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        grpc__health__v1__health_check_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Grpc__Health__V1__HealthCheckRequest.self).pointee
        service = try CFields.string(c.service, field: "service")
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Grpc__Health__V1__HealthCheckRequest.self) {
            grpc__health__v1__health_check_request__init($0)
        }
        c.pointee.service = arena.string(service)
        return c.asMessage
    }
}

/// `grpc.health.v1.HealthCheckResponse`.
public struct HealthCheckResponse: Hashable, Sendable {
    /// `grpc.health.v1.HealthCheckResponse.ServingStatus`.
    public enum ServingStatus: Int32, Sendable {
        case unknown = 0
        case serving
        case notServing
        case serviceUnknown

        /// The proto enum value name, e.g. `SERVING`.
        public var protoName: String {
            switch self {
            case .unknown: "UNKNOWN"
            case .serving: "SERVING"
            case .notServing: "NOT_SERVING"
            case .serviceUnknown: "SERVICE_UNKNOWN"
            }
        }
    }

    public var status: ServingStatus
    public init(status: ServingStatus = .unknown) { self.status = status }
}

extension HealthCheckResponse: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        grpc__health__v1__health_check_response__descriptor_ptr()
    }

    /// A status number this build does not know reads as `.unknown`.
    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Grpc__Health__V1__HealthCheckResponse.self).pointee
        status = ServingStatus(rawValue: Int32(truncatingIfNeeded: c.status.rawValue)) ?? .unknown
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Grpc__Health__V1__HealthCheckResponse.self) {
            grpc__health__v1__health_check_response__init($0)
        }
        c.pointee.status = Grpc__Health__V1__HealthCheckResponse__ServingStatus(
            rawValue: .init(truncatingIfNeeded: status.rawValue))
        return c.asMessage
    }
}
