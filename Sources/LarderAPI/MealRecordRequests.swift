import CLarderProto
import CProtobufC
import LarderWire

/// `larder.v1.CreateMealRecordRequest`.
public struct CreateMealRecordRequest: Hashable, Sendable {
    public var mealRecord: MealRecord
    public init(mealRecord: MealRecord) { self.mealRecord = mealRecord }
}

extension CreateMealRecordRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__create_meal_record_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__CreateMealRecordRequest.self).pointee
        mealRecord = try c.meal_record.map { p throws(RPCError) in try MealRecord(c: p) } ?? MealRecord()
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__CreateMealRecordRequest.self) {
            larder__v1__create_meal_record_request__init($0)
        }
        c.pointee.meal_record = mealRecord.buildC(in: arena)
        return c.asMessage
    }
}

/// `larder.v1.GetMealRecordRequest`.
public struct GetMealRecordRequest: Hashable, Sendable {
    public var id: String
    public init(id: String) { self.id = id }
}

extension GetMealRecordRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__get_meal_record_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        id = try CFields.string(message.cast(to: Larder__V1__GetMealRecordRequest.self).pointee.id, field: "id")
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__GetMealRecordRequest.self) { larder__v1__get_meal_record_request__init($0) }
        c.pointee.id = arena.string(id)
        return c.asMessage
    }
}

/// `larder.v1.ListMealRecordsRequest`: one page of meals, newest first.
public struct ListMealRecordsRequest: Hashable, Sendable {
    /// 1-1000; 0 means the server default (50).
    public var pageSize: Int32
    /// `nextPageToken` of the previous page; empty for the first page.
    public var pageToken: String
    /// Only meals eaten at or after this time, when set.
    public var startTime: Timestamp?
    /// Only meals eaten before this time, when set.
    public var endTime: Timestamp?
    /// Only this category, unless `.unspecified`.
    public var category: MealCategory

    public init(pageSize: Int32 = 0, pageToken: String = "", startTime: Timestamp? = nil, endTime: Timestamp? = nil,
                category: MealCategory = .unspecified) {
        self.pageSize = pageSize
        self.pageToken = pageToken
        self.startTime = startTime
        self.endTime = endTime
        self.category = category
    }
}

extension ListMealRecordsRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__list_meal_records_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__ListMealRecordsRequest.self).pointee
        self.init(
            pageSize: c.page_size,
            pageToken: try CFields.string(c.page_token, field: "page_token"),
            startTime: Timestamp?(c: c.start_time),
            endTime: Timestamp?(c: c.end_time),
            category: try MealCategory(c: c.category, field: "category"))
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__ListMealRecordsRequest.self) {
            larder__v1__list_meal_records_request__init($0)
        }
        c.pointee.page_size = pageSize
        c.pointee.page_token = arena.string(pageToken)
        c.pointee.start_time = startTime.buildC(in: arena)
        c.pointee.end_time = endTime.buildC(in: arena)
        c.pointee.category = category.c
        return c.asMessage
    }
}

/// `larder.v1.ListMealRecordsResponse`.
public struct ListMealRecordsResponse: Hashable, Sendable {
    /// Newest first: `eatenAt` descending, then id descending.
    public var mealRecords: [MealRecord]
    /// Pass as `pageToken` for the next page; empty on the last page.
    public var nextPageToken: String

    public init(mealRecords: [MealRecord], nextPageToken: String = "") {
        self.mealRecords = mealRecords
        self.nextPageToken = nextPageToken
    }
}

extension ListMealRecordsResponse: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__list_meal_records_response__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__ListMealRecordsResponse.self).pointee
        mealRecords = try CFields.messages(c.meal_records, count: c.n_meal_records) {
            p throws(RPCError) in try MealRecord(c: p)
        }
        nextPageToken = try CFields.string(c.next_page_token, field: "next_page_token")
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__ListMealRecordsResponse.self) {
            larder__v1__list_meal_records_response__init($0)
        }
        c.pointee.n_meal_records = mealRecords.count
        c.pointee.meal_records = arena.pointers(mealRecords) { $0.buildC(in: arena) }
        c.pointee.next_page_token = arena.string(nextPageToken)
        return c.asMessage
    }
}

/// `larder.v1.UpdateMealRecordRequest`.
public struct UpdateMealRecordRequest: Hashable, Sendable {
    /// The id selects the record; the other fields are the new values.
    public var mealRecord: MealRecord
    /// Empty = all mutable fields (`name`, `calories`, `category`, `eaten_at`).
    public var updateMask: FieldMask
    public init(mealRecord: MealRecord, updateMask: FieldMask = []) {
        self.mealRecord = mealRecord
        self.updateMask = updateMask
    }
}

extension UpdateMealRecordRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__update_meal_record_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        let c = message.cast(to: Larder__V1__UpdateMealRecordRequest.self).pointee
        mealRecord = try c.meal_record.map { p throws(RPCError) in try MealRecord(c: p) } ?? MealRecord()
        updateMask = try FieldMask(c: c.update_mask)
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__UpdateMealRecordRequest.self) {
            larder__v1__update_meal_record_request__init($0)
        }
        c.pointee.meal_record = mealRecord.buildC(in: arena)
        c.pointee.update_mask = updateMask.buildC(in: arena)
        return c.asMessage
    }
}

/// `larder.v1.DeleteMealRecordRequest`.
public struct DeleteMealRecordRequest: Hashable, Sendable {
    public var id: String
    public init(id: String) { self.id = id }
}

extension DeleteMealRecordRequest: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> {
        larder__v1__delete_meal_record_request__descriptor_ptr()
    }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        id = try CFields.string(message.cast(to: Larder__V1__DeleteMealRecordRequest.self).pointee.id, field: "id")
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> {
        let c = arena.message(Larder__V1__DeleteMealRecordRequest.self) {
            larder__v1__delete_meal_record_request__init($0)
        }
        c.pointee.id = arena.string(id)
        return c.asMessage
    }
}
