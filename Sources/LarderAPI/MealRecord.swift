import CLarderProto
import CProtobufC
import LarderWire

/// What was eaten, when, and how many calories (`larder.v1.MealRecord`).
public struct MealRecord: Hashable, Sendable {
    /// Lowercase UUID v4; empty on create lets the server choose.
    public var id: String
    public var name: String
    /// 0-100000.
    public var calories: Int32
    /// Must not be `.unspecified` on create.
    public var category: MealCategory
    /// When the meal was eaten; the server uses its clock when nil on create.
    public var eatenAt: Timestamp?
    /// Output only.
    public var createTime: Timestamp?
    /// Output only.
    public var updateTime: Timestamp?

    public init(id: String = "", name: String = "", calories: Int32 = 0, category: MealCategory = .unspecified,
                eatenAt: Timestamp? = nil, createTime: Timestamp? = nil, updateTime: Timestamp? = nil) {
        self.id = id
        self.name = name
        self.calories = calories
        self.category = category
        self.eatenAt = eatenAt
        self.createTime = createTime
        self.updateTime = updateTime
    }
}

extension MealRecord: ProtoMessage {
    public static var descriptor: UnsafePointer<ProtobufCMessageDescriptor> { larder__v1__meal_record__descriptor_ptr() }

    public init(unpacked message: UnsafePointer<ProtobufCMessage>) throws(RPCError) {
        try self.init(c: message.cast(to: Larder__V1__MealRecord.self))
    }

    init(c: UnsafePointer<Larder__V1__MealRecord>) throws(RPCError) {
        let c = c.pointee
        self.init(
            id: try CFields.string(c.id, field: "meal_record.id"),
            name: try CFields.string(c.name, field: "meal_record.name"),
            calories: c.calories,
            category: try MealCategory(c: c.category, field: "meal_record.category"),
            eatenAt: Timestamp?(c: c.eaten_at),
            createTime: Timestamp?(c: c.create_time),
            updateTime: Timestamp?(c: c.update_time))
    }

    public func build(in arena: CArena) -> UnsafeMutablePointer<ProtobufCMessage> { buildC(in: arena).asMessage }

    func buildC(in arena: CArena) -> UnsafeMutablePointer<Larder__V1__MealRecord> {
        let c = arena.message(Larder__V1__MealRecord.self) { larder__v1__meal_record__init($0) }
        c.pointee.id = arena.string(id)
        c.pointee.name = arena.string(name)
        c.pointee.calories = calories
        c.pointee.category = category.c
        c.pointee.eaten_at = eatenAt.buildC(in: arena)
        c.pointee.create_time = createTime.buildC(in: arena)
        c.pointee.update_time = updateTime.buildC(in: arena)
        return c
    }
}
