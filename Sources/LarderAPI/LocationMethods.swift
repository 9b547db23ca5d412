import CLarderProto
import LarderWire

/// The methods of `larder.v1.LocationService`, typed, from its generated descriptor.
public enum LocationMethods {
    public static let service = ServiceDescriptor(larder__v1__location_service__descriptor_ptr())
    public static let createLocation = RPCMethod<CreateLocationRequest, Location>(service, "CreateLocation")
    public static let getLocation = RPCMethod<GetLocationRequest, Location>(service, "GetLocation")
    public static let listLocations = RPCMethod<ListLocationsRequest, ListLocationsResponse>(service, "ListLocations")
    public static let updateLocation = RPCMethod<UpdateLocationRequest, Location>(service, "UpdateLocation")
    public static let deleteLocation = RPCMethod<DeleteLocationRequest, Empty>(service, "DeleteLocation")
}
