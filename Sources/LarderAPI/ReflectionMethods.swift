import CLarderProto
import LarderWire

/// The methods of `larder.reflection.v1.ServerReflection`, typed, from its generated descriptor.
public enum ReflectionMethods {
    public static let service = ServiceDescriptor(larder__reflection__v1__server_reflection__descriptor_ptr())
    public static let listServices = RPCMethod<ListServicesRequest, ListServicesResponse>(service, "ListServices")
    public static let describeType = RPCMethod<DescribeTypeRequest, DescribeTypeResponse>(service, "DescribeType")
}
