import CLarderProto
import LarderWire

/// The methods of `grpc.health.v1.Health`, typed, from its generated descriptor.
public enum HealthMethods {
    public static let service = ServiceDescriptor(grpc__health__v1__health__descriptor_ptr())
    public static let check = RPCMethod<HealthCheckRequest, HealthCheckResponse>(service, "Check")
}
