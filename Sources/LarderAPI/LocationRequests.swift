import CLarderProto
import CProtobufC
import LarderWire

/// `larder.v1.CreateLocationRequest`.
public struct CreateLocationRequest: Hashable, Sendable {
    public var location: Location
    public init(location: Location) { self.location = location }
}

extension CreateLocationRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__create_location_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__CreateLocationRequest.self).pointee
        location = try c.location.map { p throws(RPCError) in try Location(c: p) } ?? Location()
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__CreateLocationRequest.self) { larder__v1__create_location_request__init($0) }
        c.pointee.location = location.buildC(in: arena)
        return c.asMessage
    }
}

/// `larder.v1.GetLocationRequest`.
public struct GetLocationRequest: Hashable, Sendable {
    public var id: String
    public init(id: String) { self.id = id }
}

extension GetLocationRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__get_location_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        id = try CFields.string(message.cast(to: Larder__V1__GetLocationRequest.self).pointee.id, field: "id")
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__GetLocationRequest.self) { larder__v1__get_location_request__init($0) }
        c.pointee.id = arena.string(id)
        return c.asMessage
    }
}

/// `larder.v1.ListLocationsRequest`.
public struct ListLocationsRequest: Hashable, Sendable {
    public init() {}
}

extension ListLocationsRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__list_locations_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {}

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        arena.message(Larder__V1__ListLocationsRequest.self) { larder__v1__list_locations_request__init($0) }.asMessage
    }
}

/// `larder.v1.ListLocationsResponse`.
public struct ListLocationsResponse: Hashable, Sendable {
    /// Sorted by name.
    public var locations: [Location]
    public init(locations: [Location]) { self.locations = locations }
}

extension ListLocationsResponse: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__list_locations_response__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__ListLocationsResponse.self).pointee
        locations = try CFields.messages(c.locations, count: c.n_locations) { p throws(RPCError) in try Location(c: p) }
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__ListLocationsResponse.self) { larder__v1__list_locations_response__init($0) }
        c.pointee.n_locations = locations.count
        c.pointee.locations = arena.pointers(locations) { $0.buildC(in: arena) }
        return c.asMessage
    }
}

/// `larder.v1.UpdateLocationRequest`.
public struct UpdateLocationRequest: Hashable, Sendable {
    /// The id selects the location; the other fields are the new values.
    public var location: Location
    /// Empty = all mutable fields (`name`, `color_hex`).
    public var updateMask: FieldMask
    public init(location: Location, updateMask: FieldMask = []) {
        self.location = location
        self.updateMask = updateMask
    }
}

extension UpdateLocationRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__update_location_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__UpdateLocationRequest.self).pointee
        location = try c.location.map { p throws(RPCError) in try Location(c: p) } ?? Location()
        updateMask = try FieldMask(c: c.update_mask)
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__UpdateLocationRequest.self) { larder__v1__update_location_request__init($0) }
        c.pointee.location = location.buildC(in: arena)
        c.pointee.update_mask = updateMask.buildC(in: arena)
        return c.asMessage
    }
}

/// `larder.v1.DeleteLocationRequest`.
public struct DeleteLocationRequest: Hashable, Sendable {
    public var id: String
    public init(id: String) { self.id = id }
}

extension DeleteLocationRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__delete_location_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        id = try CFields.string(message.cast(to: Larder__V1__DeleteLocationRequest.self).pointee.id, field: "id")
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__DeleteLocationRequest.self) { larder__v1__delete_location_request__init($0) }
        c.pointee.id = arena.string(id)
        return c.asMessage
    }
}
