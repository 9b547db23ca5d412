import CLarderProto
import LarderWire

/// The methods of `larder.admin.v1.Admin`, typed, from its generated descriptor.
public enum AdminMethods {
    public static let service = ServiceDescriptor(larder__admin__v1__admin__descriptor_ptr())
    public static let getMetrics = RPCMethod<GetMetricsRequest, Metrics>(service, "GetMetrics")
    public static let getServerInfo = RPCMethod<GetServerInfoRequest, ServerInfo>(service, "GetServerInfo")
}
