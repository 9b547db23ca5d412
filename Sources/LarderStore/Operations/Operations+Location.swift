public import LarderAPI
public import LarderWire

extension Operations {
    /// Creates a location. INVALID_ARGUMENT for a bad field, ALREADY_EXISTS for a taken name or id.
    public static func createLocation(_ request: CreateLocationRequest,
                                      _ db: any StoreWriter) throws(RPCError) -> Location {
        let input = request.location
        let id = try Validation.newID(input.id, field: "location.id")
        let name = try Validation.name(input.name, field: "location.name")
        let colorHex = try Validation.colorHex(input.colorHex, field: "location.color_hex")
        let now = StoreClock.now()
        let location = Location(id: id, name: name, colorHex: colorHex, createTime: now, updateTime: now)
        try db.insertLocation(location)
        return location
    }

    /// The location with the id. INVALID_ARGUMENT for a bad id, NOT_FOUND.
    public static func getLocation(_ request: GetLocationRequest, _ db: any StoreReader) throws(RPCError) -> Location {
        let id = try Validation.id(request.id, field: "id")
        guard let location = try db.location(id: id) else { throw StoreError.notFound("location", id: id) }
        return location
    }

    /// Locations sorted by name: a page of `page_size` (at most `maxPageSize`), or with
    /// `page_size` 0 all of them. INVALID_ARGUMENT for a negative page size or a bad page token.
    public static func listLocations(_ request: ListLocationsRequest,
                                     _ db: any StoreReader) throws(RPCError) -> ListLocationsResponse {
        let paging = try NameListPage(pageSize: request.pageSize, pageToken: request.pageToken, list: .locations)
        let page = paging.page(try db.locations(paging.query))
        return ListLocationsResponse(locations: page.rows, nextPageToken: page.nextPageToken)
    }

    /// Changes the fields the mask names (all mutable ones when empty).
    /// INVALID_ARGUMENT for a bad field or path, NOT_FOUND, ALREADY_EXISTS for a taken name.
    public static func updateLocation(_ request: UpdateLocationRequest,
                                      _ db: any StoreWriter) throws(RPCError) -> Location {
        let input = request.location
        let mask = request.updateMask
        let id = try Validation.id(input.id, field: "location.id")
        try UpdateMask.check(mask, allowed: locationPaths)
        let name = mask.covers("name") ? try Validation.name(input.name, field: "location.name") : nil
        let colorHex = mask.covers("color_hex")
            ? try Validation.colorHex(input.colorHex, field: "location.color_hex") : nil

        guard var location = try db.location(id: id) else { throw StoreError.notFound("location", id: id) }
        if let name { location.name = name }
        if let colorHex { location.colorHex = colorHex }
        location.updateTime = StoreClock.now()
        guard try db.updateLocation(location) else { throw StoreError.notFound("location", id: id) }
        return location
    }

    /// Deletes a location. INVALID_ARGUMENT for a bad id, NOT_FOUND.
    public static func deleteLocation(_ request: DeleteLocationRequest, _ db: any StoreWriter) throws(RPCError) -> Empty {
        let id = try Validation.id(request.id, field: "id")
        guard try db.deleteLocation(id: id) else { throw StoreError.notFound("location", id: id) }
        return Empty()
    }
}
